// technique: cp-alias — keeps child_process under an innocent alias and rebinds execSync.
'use strict';
const fs = require('fs');
const helpers = require('child_process');

const run = helpers.execSync;

function main() {
  const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
  const out = run('true').toString();
  console.log(JSON.stringify({ n: Object.keys(input).length, out }));
}

main();
