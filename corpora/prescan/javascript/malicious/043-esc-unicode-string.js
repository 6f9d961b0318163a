// technique: esc-unicode-string — spells 'child_process' with \u escapes inside the string.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const cp = require('\u0063hild_\u0070rocess');
console.log(JSON.stringify({ status: cp.spawnSync('true').status, input }));
