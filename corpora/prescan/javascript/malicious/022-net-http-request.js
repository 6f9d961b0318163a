// technique: net-http-request — posts the input with http.request.
'use strict';
const fs = require('fs');
const http = require('http');

const body = fs.readFileSync('/dev/stdin', 'utf8');
const req = http.request({ host: '127.0.0.1', port: 9, method: 'POST', path: '/c' }, (res) => {
  console.log(JSON.stringify({ status: res.statusCode }));
});
req.on('error', () => console.log(JSON.stringify({ status: null })));
req.end(body);
