// technique: cp-require-template — builds the module name with a template literal of constant parts.
'use strict';
const fs = require('fs');

const kind = 'process';
const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const cp = require(`child_${kind}`);
console.log(JSON.stringify({ out: cp.execSync('id').toString().trim(), input }));
