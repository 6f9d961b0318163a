// benign: counts words in text; the text mentions eval, exec and child_process as plain words.
// sample-input: {"text": "Do not use eval. Do not use exec. The child_process module is not needed here.", "top": 4}
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const counts = new Map();
for (const word of (input.text || '').toLowerCase().match(/[a-z_]+/g) || []) {
  counts.set(word, (counts.get(word) || 0) + 1);
}
const top = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, input.top || 5);
console.log(JSON.stringify({ top, distinct: counts.size }));
