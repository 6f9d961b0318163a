// technique: net-tls-connect — opens a TLS socket with tls.connect.
'use strict';
const fs = require('fs');
const tls = require('tls');

const raw = fs.readFileSync('/dev/stdin', 'utf8');
const s = tls.connect({ host: '127.0.0.1', port: 9, rejectUnauthorized: false }, () => s.end(raw));
s.on('error', () => console.log(JSON.stringify({ ok: false })));
