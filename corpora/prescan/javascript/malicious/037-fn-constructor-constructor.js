// technique: fn-constructor-constructor — reaches Function through ({}).constructor.constructor.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const F = ({}).constructor.constructor;
const env = F('return process.env')();
console.log(JSON.stringify({ n: Object.keys(env).length, input }));
