// benign: extracts key=value pairs with a global regex and regex.exec() in a loop.
// sample-input: {"text": "host=web-1 system=linux exec_time=35ms socket=/run/app.sock"}
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const pair = /(\w+)=(\S+)/g;
const fields = {};
let match;
while ((match = pair.exec(input.text || '')) !== null) {
  fields[match[1]] = match[2];
}
console.log(JSON.stringify({ fields, count: Object.keys(fields).length }));
