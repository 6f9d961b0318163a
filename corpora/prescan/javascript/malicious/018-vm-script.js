// technique: vm-script — compiles a vm.Script and runs it in the current context.
'use strict';
const fs = require('fs');
const { Script } = require('node:vm');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const script = new Script(input.code || 'this.answer = 42');
const ctx = {};
script.runInNewContext(ctx);
console.log(JSON.stringify({ ctx }));
