// technique: eslint-disable-next-line — hides eval behind an eslint-disable-next-line comment, which must not be honoured.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
// eslint-disable-next-line no-eval
const value = eval(input.expr || '9 * 9');
console.log(JSON.stringify({ value }));
