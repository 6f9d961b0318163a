// technique: process-dlopen — loads a native shared object with process.dlopen.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const mod = { exports: {} };
try {
  process.dlopen(mod, input.addon || '/nonexistent/addon.node');
} catch (e) {
  mod.exports = null;
}
console.log(JSON.stringify({ loaded: mod.exports !== null }));
