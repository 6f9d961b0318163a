// technique: vm-compile-function — builds a function from text with vm.compileFunction.
'use strict';
const fs = require('fs');
const vm = require('vm');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const fn = vm.compileFunction(input.body || 'return a + b', ['a', 'b']);
console.log(JSON.stringify({ value: fn(2, 3) }));
