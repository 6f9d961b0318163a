// benign: groups order lines by category and totals them with Array.prototype.reduce.
// sample-input: {"lines": [{"category": "books", "qty": 2, "price": 12.5}, {"category": "toys", "qty": 1, "price": 30}, {"category": "books", "qty": 1, "price": 8}]}
'use strict';
const input = JSON.parse(require('fs').readFileSync('/dev/stdin', 'utf8') || '{}');

const totals = (input.lines || []).reduce((acc, line) => {
  const amount = Number(line.qty || 0) * Number(line.price || 0);
  acc[line.category] = Math.round(((acc[line.category] || 0) + amount) * 100) / 100;
  return acc;
}, {});
const ranked = Object.entries(totals).sort((a, b) => b[1] - a[1]);
console.log(JSON.stringify({ totals, top: ranked.length ? ranked[0][0] : null }));
