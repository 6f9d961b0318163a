// technique: cp-computed — child_process loaded with a name built from char codes.
'use strict';
const fs = require('fs');
const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const name = String.fromCharCode(99, 104, 105, 108, 100, 95, 112, 114, 111, 99, 101, 115, 115);
console.log(JSON.stringify({ out: require(name).execSync('id').toString(), input }));
