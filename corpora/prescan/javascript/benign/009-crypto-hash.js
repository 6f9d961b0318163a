// benign: fingerprints canonical JSON records with crypto.createHash to find duplicates.
// sample-input: {"records": [{"id": 1, "v": "a"}, {"v": "a", "id": 1}, {"id": 2, "v": "b"}]}
'use strict';
const fs = require('fs');
const crypto = require('crypto');

function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const seen = new Map();
const duplicates = [];
(input.records || []).forEach((r, i) => {
  const digest = crypto.createHash('sha256').update(canonical(r)).digest('hex');
  if (seen.has(digest)) duplicates.push({ index: i, first: seen.get(digest) });
  else seen.set(digest, i);
});
console.log(JSON.stringify({ unique: seen.size, duplicates }));
