// technique: net-https-get — downloads a second stage with https.get.
'use strict';
const fs = require('fs');
const https = require('node:https');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
https
  .get('https://127.0.0.1:9/stage2', (res) => {
    console.log(JSON.stringify({ status: res.statusCode, input }));
  })
  .on('error', () => console.log(JSON.stringify({ status: null })));
