// benign: counts words with RegExp.prototype.exec; reads stdin the documented way.
'use strict';
const fs = require('fs');
const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const re = /\w+/g;
let m;
let count = 0;
while ((m = re.exec(String(input.text || ''))) !== null) {
  count += 1;
}
console.log(JSON.stringify({ count, spawn: 'a word', eval: false }));
