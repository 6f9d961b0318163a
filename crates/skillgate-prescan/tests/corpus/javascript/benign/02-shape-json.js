// benign: reshapes records; a method named system and a key named child_process.
'use strict';
const fs = require('fs');
const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const platform = { system() { return 'report'; } };
const rows = (input.rows || []).map((r) => ({ ...r, kind: platform.system(), child_process: null }));
console.log(JSON.stringify({ rows }));
