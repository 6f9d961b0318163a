// benign: a tiny job queue whose Job class has an exec() method that only runs arithmetic steps.
// sample-input: {"jobs": [{"name": "double", "op": "mul", "arg": 2}, {"name": "plus-three", "op": "add", "arg": 3}], "start": 5}
'use strict';
const fs = require('fs');

const OPS = { add: (x, a) => x + a, mul: (x, a) => x * a, sub: (x, a) => x - a };

class Job {
  constructor(spec) {
    this.name = spec.name;
    this.op = OPS[spec.op];
    this.arg = Number(spec.arg);
    if (!this.op) throw new Error(`unknown op ${spec.op}`);
  }

  exec(value) {
    return this.op(value, this.arg);
  }
}

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
let value = Number(input.start || 0);
const trace = [];
for (const spec of input.jobs || []) {
  const job = new Job(spec);
  value = job.exec(value);
  trace.push({ job: job.name, value });
}
console.log(JSON.stringify({ value, trace }));
