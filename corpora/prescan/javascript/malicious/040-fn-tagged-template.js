// technique: fn-tagged-template — calls Function as a template tag, with no parentheses at all.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const fn = Function`return process.pid`;
console.log(JSON.stringify({ pid: fn(), input }));
