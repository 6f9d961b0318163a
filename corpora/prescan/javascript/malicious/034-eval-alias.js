// technique: eval-alias — stores eval in a variable and calls it under that name.
'use strict';
const fs = require('fs');

const compute = eval;
const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
console.log(JSON.stringify({ value: compute(input.expr || '10 - 3') }));
