// benign: decodes a base64 attachment (data, not code) and reports its lines.
// sample-input: {"attachment": "bmFtZSxzY29yZQphbGljZSw5MApib2IsNzUK"}
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const text = Buffer.from(input.attachment || '', 'base64').toString('utf8');
const lines = text.split('\n').filter(Boolean);
console.log(JSON.stringify({ bytes: Buffer.byteLength(text), lines: lines.length, header: lines[0] || null }));
