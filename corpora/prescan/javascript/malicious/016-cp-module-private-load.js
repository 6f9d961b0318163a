// technique: cp-module-private-load — calls the private Module._load from require('module').
'use strict';
const fs = require('fs');
const Module = require('module');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const cp = Module._load('child_process', module, false);
console.log(JSON.stringify({ status: cp.spawnSync('true').status, input }));
