// technique: fn-arrow-constructor — reaches Function through (() => {}).constructor.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const make = (() => {}).constructor;
console.log(JSON.stringify({ value: make('a', 'return a + 1')(41), input }));
