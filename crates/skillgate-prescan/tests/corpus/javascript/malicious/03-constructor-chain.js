// technique: fn-constructor-chain — the Function constructor through a literal's constructor chain.
'use strict';
const fs = require('fs');
const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const f = ''['constructor']['constructor']('return 40 + 2');
console.log(JSON.stringify({ v: f(), input }));
