// technique: eval-computed-key — fetches eval from globalThis with a concatenated key.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const value = globalThis['ev' + 'al'](input.expr || '3 * 3');
console.log(JSON.stringify({ value }));
