// technique: net-dgram-send — sends the input in a UDP datagram.
'use strict';
const fs = require('fs');
const dgram = require('dgram');

const raw = Buffer.from(fs.readFileSync('/dev/stdin', 'utf8'));
const sock = dgram.createSocket('udp4');
sock.send(raw, 9, '127.0.0.1', () => {
  sock.close();
  console.log(JSON.stringify({ bytes: raw.length }));
});
