const fs = require("fs");

const { text } = JSON.parse(fs.readFileSync(0, "utf8"));
const counts = {};
for (const w of text.toLowerCase().match(/[a-z]+/g) || []) {
  counts[w] = (counts[w] || 0) + 1;
}
const top = Object.entries(counts).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 3);
console.log(JSON.stringify({ words: Object.values(counts).reduce((a, b) => a + b, 0), top }));
