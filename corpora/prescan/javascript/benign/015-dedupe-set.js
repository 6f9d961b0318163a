// benign: removes duplicate e-mail addresses case-insensitively with a Set.
// sample-input: {"emails": ["Ops@Example.com", "ops@example.com", "sales@example.org", " exec@corp.example "]}
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const seen = new Set();
const unique = [];
for (const raw of input.emails || []) {
  const email = String(raw).trim().toLowerCase();
  if (!seen.has(email)) {
    seen.add(email);
    unique.push(email);
  }
}
console.log(JSON.stringify({ unique, removed: (input.emails || []).length - unique.length }));
