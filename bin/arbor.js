#!/usr/bin/env node

// Thin launcher over the bundled CLI, dist/cli.js (built by `npm run build`, which `npm install`
// runs via prepare; decision 0068). A checkout built with tsc alone runs the compiled tree instead.
const fs = require('node:fs');
const path = require('node:path');
const root = path.join(__dirname, '..');
const bundle = path.join(root, 'dist', 'cli.js');
const compiled = path.join(root, 'out', 'src', 'cli', 'main.js');
let cli;
try {
  cli = require(fs.existsSync(bundle) ? bundle : compiled);
} catch (err) {
  process.stderr.write(`arbor: the CLI is not built (${err.message}). Run 'npm run build' in ${root}.\n`);
  process.exit(2);
}
const io = { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`), env: process.env };
cli.main(process.argv.slice(2), io).then((code) => {
  process.exitCode = code;
});
