// benign: normalises relative upload paths with path.posix and rejects ones that escape the folder.
// sample-input: {"paths": ["reports/2026/q4.csv", "../secrets.txt", "a/./b/../c.json"]}
'use strict';
const fs = require('fs');
const path = require('path');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const checked = (input.paths || []).map((p) => {
  const norm = path.posix.normalize(p);
  const escapes = norm.startsWith('..') || path.posix.isAbsolute(norm);
  return { path: p, normalised: norm, ext: path.posix.extname(norm), ok: !escapes };
});
console.log(JSON.stringify({ checked }));
