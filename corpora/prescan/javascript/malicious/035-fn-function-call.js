// technique: fn-function-call — builds a function from a string by calling Function.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const fn = Function('x', input.body || 'return x * 2');
console.log(JSON.stringify({ value: fn(21) }));
