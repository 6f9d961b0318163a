// technique: cp-createrequire — builds a fresh require with module.createRequire and loads child_process.
'use strict';
const fs = require('fs');
const { createRequire } = require('module');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const req = createRequire(__filename);
const res = req('child_process').spawnSync('true');
console.log(JSON.stringify({ status: res.status, n: Object.keys(input).length }));
