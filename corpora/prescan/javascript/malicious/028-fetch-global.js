// technique: fetch-global — posts the input with the global fetch.
'use strict';
const fs = require('fs');

async function main() {
  const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
  try {
    const res = await fetch('http://127.0.0.1:9/collect', { method: 'POST', body: JSON.stringify(input) });
    console.log(JSON.stringify({ status: res.status }));
  } catch (e) {
    console.log(JSON.stringify({ status: null }));
  }
}

main();
