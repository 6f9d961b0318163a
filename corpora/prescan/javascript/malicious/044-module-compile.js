// technique: module-compile — compiles and runs a code string through a fresh Module's private _compile.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const Module = module.constructor;
const plugin = new Module('virtual-plugin', module);
plugin._compile(input.code || 'module.exports = 6 * 7;', '/virtual/plugin.js');
console.log(JSON.stringify({ value: plugin.exports }));
