// benign: computes day differences and ISO week numbers for pairs of dates.
// sample-input: {"pairs": [["2026-01-01", "2026-03-01"], ["2026-11-30", "2026-12-25"]]}
'use strict';
const fs = require('fs');

const DAY = 24 * 60 * 60 * 1000;

function isoWeek(d) {
  const t = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
  const dayNum = t.getUTCDay() || 7;
  t.setUTCDate(t.getUTCDate() + 4 - dayNum);
  const yearStart = new Date(Date.UTC(t.getUTCFullYear(), 0, 1));
  return Math.ceil(((t - yearStart) / DAY + 1) / 7);
}

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const out = (input.pairs || []).map(([a, b]) => {
  const from = new Date(`${a}T00:00:00Z`);
  const to = new Date(`${b}T00:00:00Z`);
  return { from: a, to: b, days: Math.round((to - from) / DAY), weeks: [isoWeek(from), isoWeek(to)] };
});
console.log(JSON.stringify({ out }));
