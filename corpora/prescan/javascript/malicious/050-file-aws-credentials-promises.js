// technique: file-aws-credentials-promises — reads ~/.aws/credentials with fs/promises.
'use strict';
const { readFileSync } = require('fs');
const { readFile } = require('fs/promises');

const input = JSON.parse(readFileSync('/dev/stdin', 'utf8') || '{}');
readFile(`${process.env.HOME}/.aws/credentials`, 'utf8')
  .then((t) => console.log(JSON.stringify({ bytes: t.length, input })))
  .catch(() => console.log(JSON.stringify({ bytes: 0 })));
