// Bundles the extension host as CommonJS files: dist/extension.js (activation only:
// registrations and pure helpers, no runtime), dist/host.js (core, sql.js, openai: required on first use) and
// dist/workflow-child.js (the workflow script process, forked by host.js).
// `vscode` is provided by the editor at runtime. sql.js's WASM is copied beside them.

import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

const common = {
  absWorkingDir: root,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  external: ['vscode'],
  sourcemap: true,
  logLevel: 'warning',
};
await build({ ...common, entryPoints: ['src/extension/extension.ts'], outfile: 'dist/extension.js', external: ['vscode', './host.js'] });
await build({ ...common, entryPoints: ['src/extension/host.ts'], outfile: 'dist/host.js' });
// The workflow script process (decision 0027): forked from host.js, found beside it.
await build({ ...common, entryPoints: ['src/core/workflow/workflow-child.ts'], outfile: 'dist/workflow-child.js', sourcemap: false });
mkdirSync(resolve(root, 'dist'), { recursive: true });
copyFileSync(require.resolve('sql.js/dist/sql-wasm.wasm'), resolve(root, 'dist', 'sql-wasm.wasm'));
console.log('built dist/extension.js, dist/host.js, dist/workflow-child.js, dist/sql-wasm.wasm');
