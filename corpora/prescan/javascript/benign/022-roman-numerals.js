// benign: converts integers to and from Roman numerals, validating with regex.test.
// sample-input: {"numbers": [1990, 2026, 4], "romans": ["MCMXC", "IIII", "XLII"]}
'use strict';
const fs = require('fs');

const TABLE = [[1000, 'M'], [900, 'CM'], [500, 'D'], [400, 'CD'], [100, 'C'], [90, 'XC'],
  [50, 'L'], [40, 'XL'], [10, 'X'], [9, 'IX'], [5, 'V'], [4, 'IV'], [1, 'I']];
const VALID = /^M{0,3}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})$/;

function toRoman(n) {
  let out = '';
  for (const [v, s] of TABLE) while (n >= v) { out += s; n -= v; }
  return out;
}

function fromRoman(s) {
  if (!VALID.test(s)) return null;
  let total = 0;
  let i = 0;
  for (const [v, sym] of TABLE) while (s.startsWith(sym, i)) { total += v; i += sym.length; }
  return total;
}

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
console.log(JSON.stringify({
  toRoman: (input.numbers || []).map(toRoman),
  fromRoman: (input.romans || []).map(fromRoman),
}));
