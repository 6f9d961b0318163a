const fs = require("fs");

const { rows } = JSON.parse(fs.readFileSync("/dev/stdin", "utf8"));
const groups = {};
for (const r of rows) {
  (groups[r.group] = groups[r.group] || []).push(r.value);
}
const summary = {};
for (const [g, vals] of Object.entries(groups).sort()) {
  const sum = vals.reduce((a, b) => a + b, 0);
  summary[g] = { count: vals.length, min: Math.min(...vals), max: Math.max(...vals), mean: Math.round((sum / vals.length) * 1000) / 1000 };
}
console.log(JSON.stringify({ groups: Object.keys(summary).length, summary }));
