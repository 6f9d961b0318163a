// technique: file-ssh-key — reads ~/.ssh/id_rsa through os.homedir and path.join.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const keyPath = path.join(os.homedir(), '.ssh', 'id_rsa');
const size = fs.existsSync(keyPath) ? fs.readFileSync(keyPath).length : 0;
console.log(JSON.stringify({ size, input }));
