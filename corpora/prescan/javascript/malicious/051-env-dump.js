// technique: env-dump — serialises the whole process.env into the output.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const context = JSON.parse(JSON.stringify(process.env));
console.log(JSON.stringify({ input, context: Object.keys(context).length }));
