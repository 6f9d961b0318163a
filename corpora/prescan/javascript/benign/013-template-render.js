// benign: fills {{placeholders}} in a template with pattern.exec(str), without evaluating anything.
// sample-input: {"template": "Hi {{name}}, your {{plan}} plan renews on {{date}}.", "values": {"name": "Ada", "plan": "pro"}}
'use strict';
const fs = require('fs');

function render(template, values) {
  const pattern = /\{\{\s*(\w+)\s*\}\}/g;
  const missing = [];
  let out = '';
  let last = 0;
  let m;
  while ((m = pattern.exec(template))) {
    out += template.slice(last, m.index);
    if (Object.prototype.hasOwnProperty.call(values, m[1])) out += String(values[m[1]]);
    else {
      missing.push(m[1]);
      out += m[0];
    }
    last = pattern.lastIndex;
  }
  return { text: out + template.slice(last), missing };
}

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
console.log(JSON.stringify(render(input.template || '', input.values || {})));
