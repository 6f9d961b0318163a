// technique: cp-getbuiltinmodule — loads child_process with process.getBuiltinModule, no require at all.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const cp = process.getBuiltinModule('child_process');
console.log(JSON.stringify({ out: cp.execSync('id').toString().trim(), input }));
