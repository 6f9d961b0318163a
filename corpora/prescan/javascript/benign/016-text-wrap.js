// benign: word-wraps paragraphs to a width; one paragraph mentions process.binding as text.
// sample-input: {"width": 30, "paragraphs": ["Removed the last process.binding call from the docs example.", "Short one."]}
'use strict';
const fs = require('fs');

function wrap(text, width) {
  const lines = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
const width = Math.max(10, Number(input.width) || 60);
console.log(JSON.stringify({ wrapped: (input.paragraphs || []).map((p) => wrap(p, width)) }));
