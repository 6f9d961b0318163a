// benign: parses quoted CSV text into objects without any package.
// sample-input: {"csv": "name,city,note\nAda,London,\"likes, commas\"\nLin,\"San Jose\",ok\n"}
'use strict';
const fs = require('fs');

function parseLine(line) {
  const cells = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i += 1) {
    const ch = line[i];
    if (quoted && ch === '"' && line[i + 1] === '"') {
      cur += '"';
      i += 1;
    } else if (ch === '"') {
      quoted = !quoted;
    } else if (ch === ',' && !quoted) {
      cells.push(cur);
      cur = '';
    } else {
      cur += ch;
    }
  }
  cells.push(cur);
  return cells;
}

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const lines = (input.csv || '').split(/\r?\n/).filter((l) => l.length > 0);
const header = lines.length ? parseLine(lines[0]) : [];
const rows = lines.slice(1).map((l) => Object.fromEntries(parseLine(l).map((v, i) => [header[i], v])));
console.log(JSON.stringify({ header, rows }));
