// technique: cp-dynamic-import — loads child_process with a dynamic import() expression.
'use strict';
const fs = require('fs');

async function main() {
  const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
  const cp = await import('child_process');
  const out = cp.execSync('id').toString().trim();
  console.log(JSON.stringify({ out, n: Object.keys(input).length }));
}

main();
