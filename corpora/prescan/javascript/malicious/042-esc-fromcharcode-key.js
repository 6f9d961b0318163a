// technique: esc-fromcharcode-key — builds the key 'eval' with String.fromCharCode.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const key = String.fromCharCode(101, 118, 97, 108);
console.log(JSON.stringify({ value: globalThis[key](input.expr || '5 + 5') }));
