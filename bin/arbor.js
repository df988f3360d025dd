#!/usr/bin/env node

// Thin launcher over the compiled CLI (built by `npm run build`, which `npm install` runs via prepare).
const path = require('node:path');
let cli;
try {
  cli = require(path.join(__dirname, '..', 'out', 'src', 'cli', 'main.js'));
} catch (err) {
  process.stderr.write(`arbor: the CLI is not built (${err.message}). Run 'npm run build' in ${path.join(__dirname, '..')}.\n`);
  process.exit(2);
}
const io = { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`), env: process.env };
cli.main(process.argv.slice(2), io).then((code) => {
  process.exitCode = code;
});
