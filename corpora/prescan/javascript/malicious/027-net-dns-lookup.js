// technique: net-dns-lookup — resolves names with dns, a classic exfiltration channel.
'use strict';
const fs = require('fs');
const dns = require('dns');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const label = Buffer.from(JSON.stringify(input)).toString('hex').slice(0, 20);
dns.lookup(`${label}.localhost`, (err, address) => {
  console.log(JSON.stringify({ address: address || null, label }));
});
