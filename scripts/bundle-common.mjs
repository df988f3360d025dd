// What the host bundle (build-host.mjs) and the CLI bundle (build-cli.mjs) share: esbuild's
// options, the workflow script process and the spawner both fork (decisions 0027, 0095: found beside
// the bundle that forks it) and sql.js's WASM, copied beside them.
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

export const common = {
  absWorkingDir: root,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  external: ['vscode'],
  sourcemap: true,
  logLevel: 'warning',
};

/** dist/workflow-child.js, dist/spawner-child.js (decision 0095) and dist/sql-wasm.wasm: what every bundle in dist/ finds beside itself. */
export async function buildBesides() {
  await build({ ...common, entryPoints: ['src/core/workflow/workflow-child.ts'], outfile: 'dist/workflow-child.js', sourcemap: false });
  await build({ ...common, entryPoints: ['src/core/process/spawner-child.ts'], outfile: 'dist/spawner-child.js', sourcemap: false, minifyWhitespace: true });
  mkdirSync(resolve(root, 'dist'), { recursive: true });
  copyFileSync(require.resolve('sql.js/dist/sql-wasm.wasm'), resolve(root, 'dist', 'sql-wasm.wasm'));
}
