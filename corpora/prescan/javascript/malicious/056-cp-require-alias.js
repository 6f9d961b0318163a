// technique: cp-require-alias — renames require itself before loading child_process.
'use strict';
const fs = require('fs');

const load = require;
const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const out = load('child_process').execSync('true').toString();
console.log(JSON.stringify({ out, input }));
