// technique: cp-require-join — joins an array of pieces into 'child_process'.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const cp = require(['child', 'process'].join('_'));
console.log(JSON.stringify({ status: cp.spawnSync('true').status, input }));
