// benign: summarises model evaluation scores; the report has an "eval" key and a "system" key.
// sample-input: {"system": "ranker-v2", "runs": [{"suite": "qa", "score": 0.81}, {"suite": "qa", "score": 0.85}, {"suite": "math", "score": 0.62}]}
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const bySuite = {};
for (const run of input.runs || []) {
  (bySuite[run.suite] = bySuite[run.suite] || []).push(Number(run.score));
}
const evalSummary = Object.fromEntries(
  Object.entries(bySuite).map(([suite, s]) => [suite, { n: s.length, mean: s.reduce((a, b) => a + b, 0) / s.length }]),
);
console.log(JSON.stringify({ system: input.system || null, eval: evalSummary }));
