// benign: reshapes records, keeping whitelisted fields; the records have "eval" and "system" keys.
// sample-input: {"fields": ["id", "system", "eval"], "records": [{"id": 1, "system": "prod", "eval": 0.93, "secret": "x"}, {"id": 2, "system": "dev", "eval": 0.71}]}
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const keep = new Set(input.fields || []);
const records = (input.records || []).map((r) =>
  Object.fromEntries(Object.entries(r).filter(([k]) => keep.has(k))),
);
const best = records.reduce((a, r) => (a === null || r.eval > a.eval ? r : a), null);
console.log(JSON.stringify({ records, best: { system: best && best.system, eval: best && best.eval } }));
