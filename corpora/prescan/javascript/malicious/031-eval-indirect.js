// technique: eval-indirect — calls eval indirectly with (0, eval) to run in global scope.
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const value = (0, eval)(input.expr || '1 + 1');
console.log(JSON.stringify({ value }));
