// Bundles the extension host as CommonJS files: dist/extension.js (activation only:
// registrations and pure helpers, no runtime), dist/host.js (core and sql.js: required on first use) and
// dist/workflow-child.js (the workflow script process, forked by host.js).
// `vscode` is provided by the editor at runtime. sql.js's WASM is copied beside them.

import { build } from 'esbuild';
import { buildBesides, common } from './bundle-common.mjs';

await build({ ...common, entryPoints: ['src/extension/extension.ts'], outfile: 'dist/extension.js', external: ['vscode', './host.js'] });
await build({ ...common, entryPoints: ['src/extension/host.ts'], outfile: 'dist/host.js' });
// The workflow script process (decision 0027): forked from host.js, found beside it.
await buildBesides();
console.log('built dist/extension.js, dist/host.js, dist/workflow-child.js, dist/spawner-child.js, dist/sql-wasm.wasm');
