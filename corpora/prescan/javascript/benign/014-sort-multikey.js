// benign: sorts records by several keys with a comparator built from a sort spec.
// sample-input: {"sort": [["team", "asc"], ["score", "desc"]], "rows": [{"team": "b", "score": 3}, {"team": "a", "score": 1}, {"team": "a", "score": 9}]}
'use strict';
const fs = require('fs');

function comparator(spec) {
  return (x, y) => {
    for (const [key, dir] of spec) {
      const sign = dir === 'desc' ? -1 : 1;
      if (x[key] < y[key]) return -sign;
      if (x[key] > y[key]) return sign;
    }
    return 0;
  };
}

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const rows = [...(input.rows || [])].sort(comparator(input.sort || []));
console.log(JSON.stringify({ rows }));
