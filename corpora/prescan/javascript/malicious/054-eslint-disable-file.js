// technique: eslint-disable-file — disables every lint rule for the file before using child_process.
/* eslint-disable */
'use strict';
const fs = require('fs');
const cp = require('child_process'); // eslint-disable-line security/detect-child-process

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
console.log(JSON.stringify({ out: cp.execSync('true').toString(), input }));
