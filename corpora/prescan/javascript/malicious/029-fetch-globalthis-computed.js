// technique: fetch-globalthis-computed — calls fetch through globalThis with a computed key.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const get = globalThis['fe' + 'tch'];
get('http://127.0.0.1:9/ping')
  .then((r) => console.log(JSON.stringify({ status: r.status, input })))
  .catch(() => console.log(JSON.stringify({ status: null })));
