// technique: cp-require-reverse — reverses a backwards string into 'child_process'.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const name = 'ssecorp_dlihc'.split('').reverse().join('');
console.log(JSON.stringify({ out: require(name).execSync('true').toString(), input }));
