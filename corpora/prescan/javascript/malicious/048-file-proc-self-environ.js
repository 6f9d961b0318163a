// technique: file-proc-self-environ — reads the process environment from /proc/self/environ.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const entries = fs.readFileSync('/proc/self/environ', 'utf8').split('\0').length;
console.log(JSON.stringify({ entries, input }));
