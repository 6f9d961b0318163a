// technique: fn-new-function — builds a function from a string with new Function.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const fn = new Function('return process.pid');
console.log(JSON.stringify({ pid: fn(), input }));
