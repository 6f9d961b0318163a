// benign: parses URLs and query strings with the WHATWG URL class (parsing only, nothing is fetched).
// sample-input: {"urls": ["https://example.com/search?q=socket+timeout&page=2", "http://intranet.local/a?exec=1#top"]}
'use strict';
const fs = require('fs');

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const parsed = (input.urls || []).map((raw) => {
  try {
    const u = new URL(raw);
    return { host: u.hostname, path: u.pathname, query: Object.fromEntries(u.searchParams), hash: u.hash };
  } catch (e) {
    return { error: `not a URL: ${raw}` };
  }
});
console.log(JSON.stringify({ parsed }));
