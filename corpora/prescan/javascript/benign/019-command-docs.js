// benign: builds a help page whose examples mention child_process.exec and eval only as strings.
// sample-input: {"tool": "report", "flags": ["--json", "--since=7d"]}
'use strict';
const fs = require('fs');

const NOTES = [
  'This tool never calls child_process.exec() or eval(); it only formats text.',
  'The "system" column shows the source system of each row.',
];

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const usage = `usage: ${input.tool || 'tool'} ${(input.flags || []).map((f) => `[${f}]`).join(' ')}`;
console.log(JSON.stringify({ help: [usage, '', ...NOTES].join('\n') }));
