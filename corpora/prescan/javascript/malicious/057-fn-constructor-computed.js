// technique: fn-constructor-computed — reaches Function via a computed 'constructor' key built from pieces.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const k = 'con' + 'structor';
const F = [][k][k];
console.log(JSON.stringify({ v: F('return 2 + 2')(), input }));
