// benign: formats timestamps for several locales and time zones with Intl.DateTimeFormat.
// sample-input: {"timestamp": "2026-11-30T09:30:00Z", "zones": ["UTC", "America/New_York", "Asia/Tokyo"]}
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const when = new Date(input.timestamp || Date.UTC(2026, 0, 1));
const out = {};
for (const zone of input.zones || ['UTC']) {
  out[zone] = new Intl.DateTimeFormat('en-GB', { timeZone: zone, dateStyle: 'medium', timeStyle: 'short' }).format(when);
}
console.log(JSON.stringify({ iso: when.toISOString(), local: out }));
