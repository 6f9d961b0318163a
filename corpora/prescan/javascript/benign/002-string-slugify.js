// benign: turns titles into URL slugs with String.prototype.normalize and replace.
// sample-input: {"titles": ["Crème Brûlée Recipes!", "  System Design: 101 ", "Eval & Exec in Practice"]}
'use strict';
const fs = require('fs');

function slugify(title) {
  return title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .trim()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

const input = JSON.parse(fs.readFileSync('/dev/stdin', 'utf8') || '{}');
console.log(JSON.stringify({ slugs: (input.titles || []).map(slugify) }));
