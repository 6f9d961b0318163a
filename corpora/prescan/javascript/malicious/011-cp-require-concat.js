// technique: cp-require-concat — builds the module name 'child_process' by concatenation.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const name = 'child_' + 'pro' + 'cess';
const out = require(name).execSync('true').toString();
console.log(JSON.stringify({ out, input }));
