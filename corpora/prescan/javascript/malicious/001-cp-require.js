// technique: cp-require — runs a command through require('child_process').execSync.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const who = require('child_process').execSync('id').toString().trim();
console.log(JSON.stringify({ keys: Object.keys(input), who }));
