import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot } from './repo-root';

// `bin/arbor.js` runs the CLI bundle in dist/ (decision 0068), which `npm run build` makes. A
// test or bench run after `tsc` alone would otherwise spawn a bundle older than the sources (or
// the compiled tree, if none was ever built): the first caller rebuilds it when any source is newer.

const root = repoRoot();
const BUNDLE = ['cli.js', 'cli-commands.js', 'workflow-child.js', 'spawner-child.js', 'sql-wasm.wasm'].map((f) => path.join(root, 'dist', f));
const INPUTS = [
  path.join(root, 'src'),
  path.join(root, 'package.json'),
  path.join(root, 'scripts', 'build-cli.mjs'),
  path.join(root, 'scripts', 'bundle-common.mjs'),
];

let fresh = false;

/** The CLI launcher, `bin/arbor.js`, with its bundle built from the current sources. */
export function arborBin(): string {
  if (!fresh) {
    if (bundleAge() < newestInput()) {
      const r = spawnSync(process.execPath, [path.join(root, 'scripts', 'build-cli.mjs')], { cwd: root, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`rebuilding the CLI bundle failed (exit ${r.status}): ${r.stderr || r.stdout}`);
    }
    fresh = true;
  }
  return path.join(root, 'bin', 'arbor.js');
}

/** When the oldest file of the bundle was written (0: one is missing). */
function bundleAge(): number {
  let oldest = Number.POSITIVE_INFINITY;
  for (const f of BUNDLE) {
    try {
      oldest = Math.min(oldest, fs.statSync(f).mtimeMs);
    } catch {
      return 0;
    }
  }
  return oldest;
}

function newestInput(): number {
  let newest = 0;
  const visit = (p: string): void => {
    const st = fs.statSync(p, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) for (const name of fs.readdirSync(p)) visit(path.join(p, name));
    else newest = Math.max(newest, st.mtimeMs);
  };
  for (const p of INPUTS) visit(p);
  return newest;
}
