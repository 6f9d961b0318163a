'use strict';
const fs = require('fs');

const request = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8'));
const items = Array.isArray(request.items) ? request.items : [];
process.stdout.write(JSON.stringify({
  answer: `Processed ${items.length} items`,
  timestamp: new Date().toISOString(),
}) + '\n');
