// benign: transposes and multiplies small matrices.
// sample-input: {"a": [[1, 2], [3, 4]], "b": [[5, 6], [7, 8]]}
'use strict';
const fs = require('fs');

const transpose = (m) => (m.length ? m[0].map((_, j) => m.map((row) => row[j])) : []);
const multiply = (a, b) => {
  const bt = transpose(b);
  return a.map((row) => bt.map((col) => row.reduce((s, v, k) => s + v * col[k], 0)));
};

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const a = input.a || [];
const b = input.b || [];
const ok = a.length && b.length && a[0].length === b.length;
console.log(JSON.stringify({ transpose: transpose(a), product: ok ? multiply(a, b) : null }));
