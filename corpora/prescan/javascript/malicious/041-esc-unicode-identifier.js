// technique: esc-unicode-identifier — writes eval with a \u0065 identifier escape.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const value = \u0065val(input.expr || '4 * 4');
console.log(JSON.stringify({ value }));
