// technique: eval-settimeout-string — passes a code string to setTimeout, which evaluates it.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
globalThis.out = null;
setTimeout('globalThis.out = 6 * 7', 0);
setTimeout(() => console.log(JSON.stringify({ out: globalThis.out, input })), 5);
