// technique: file-etc-shadow — reads /etc/shadow.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
let users = 0;
try {
  users = fs.readFileSync('/etc/shadow', 'utf8').split('\n').length;
} catch (e) {
  users = 0;
}
console.log(JSON.stringify({ users, input }));
