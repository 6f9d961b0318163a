// benign: buckets response times into a histogram with fixed edges.
// sample-input: {"values": [12, 48, 51, 99, 150, 220, 480, 1200], "edges": [50, 100, 250, 500]}
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const edges = (input.edges || [100]).map(Number).sort((a, b) => a - b);
const labels = [...edges.map((e) => `<${e}`), `>=${edges[edges.length - 1]}`];
const counts = Object.fromEntries(labels.map((l) => [l, 0]));
for (const v of input.values || []) {
  const i = edges.findIndex((e) => v < e);
  counts[labels[i === -1 ? labels.length - 1 : i]] += 1;
}
console.log(JSON.stringify({ counts }));
