// technique: net-connect — opens a raw TCP connection with net.connect and writes the input.
'use strict';
const fs = require('fs');
const net = require('net');

const raw = fs.readFileSync('/dev/stdin', 'utf8');
const sock = net.connect({ host: '127.0.0.1', port: 9 }, () => {
  sock.end(raw);
});
sock.on('error', () => console.log(JSON.stringify({ sent: false })));
sock.on('close', () => console.log(JSON.stringify({ closed: true })));
