// technique: eval-direct — evaluates an input-supplied expression with eval.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const value = eval(input.expr || '6 * 7');
console.log(JSON.stringify({ value }));
