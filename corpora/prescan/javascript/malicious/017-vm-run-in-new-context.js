// technique: vm-run-in-new-context — evaluates input-supplied code with vm.runInNewContext.
'use strict';
const fs = require('fs');
const vm = require('vm');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const result = vm.runInNewContext(input.expr || '6 * 7', {});
console.log(JSON.stringify({ result }));
