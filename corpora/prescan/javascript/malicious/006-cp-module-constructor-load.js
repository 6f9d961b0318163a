// technique: cp-module-constructor-load — loads child_process with module.constructor._load.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const cp = module.constructor._load('child_process');
const out = cp.execSync('true').toString();
console.log(JSON.stringify({ out, input }));
