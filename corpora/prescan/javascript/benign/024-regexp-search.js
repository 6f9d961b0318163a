// benign: highlights search terms with new RegExp built from escaped user input, then regex.exec() for positions.
// sample-input: {"text": "The exec summary covers the system and the socket layer.", "terms": ["exec", "socket", "a.b"]}
'use strict';
const fs = require('fs');

const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const text = input.text || '';
const hits = {};
for (const term of input.terms || []) {
  const rx = new RegExp(`\\b${escapeRegExp(term)}\\b`, 'gi');
  const positions = [];
  let m;
  while ((m = rx.exec(text)) !== null) positions.push(m.index);
  hits[term] = positions;
}
console.log(JSON.stringify({ hits }));
