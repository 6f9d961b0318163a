// technique: worker-threads-eval — starts a worker thread from a code string with eval: true.
'use strict';
const fs = require('fs');
const { Worker } = require('worker_threads');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const code = "require('worker_threads').parentPort.postMessage(process.pid)";
const w = new Worker(code, { eval: true });
w.on('message', (pid) => {
  console.log(JSON.stringify({ pid, n: Object.keys(input).length }));
});
