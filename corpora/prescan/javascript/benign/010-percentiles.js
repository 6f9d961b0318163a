// benign: computes percentiles and the mean of latency samples.
// sample-input: {"samples": [12, 15, 11, 40, 13, 14, 90, 12, 16], "ps": [50, 90, 99]}
'use strict';
const fs = require('fs');

function percentile(sorted, p) {
  if (!sorted.length) return null;
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
}

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const sorted = (input.samples || []).map(Number).sort((a, b) => a - b);
const mean = sorted.reduce((a, b) => a + b, 0) / (sorted.length || 1);
const result = Object.fromEntries((input.ps || [50]).map((p) => [`p${p}`, percentile(sorted, p)]));
console.log(JSON.stringify({ mean, ...result }));
