// Makes `npm start` and `npm test` work on a fresh clone with nothing run before them:
// when node_modules is missing or does not match package-lock.json, run `npm ci` (whose
// `prepare` script also builds). Only Node's own modules are used here, since the project's
// dependencies may not be installed yet.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './e2e/paths.mjs';

/** Why node_modules needs `npm ci`, or undefined when it matches the lock file. */
export function depsProblem(root = repoRoot) {
  const hidden = join(root, 'node_modules', '.package-lock.json');
  if (!existsSync(hidden)) return 'node_modules is missing';
  let want;
  let have;
  try {
    want = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')).packages ?? {};
    have = JSON.parse(readFileSync(hidden, 'utf8')).packages ?? {};
  } catch (err) {
    return `cannot read a lock file (${err.message})`;
  }
  // npm's hidden lock file lists what is installed; the root entry ("") is the project itself.
  for (const [path, pkg] of Object.entries(want)) {
    if (path === '' || !path.startsWith('node_modules/')) continue;
    const got = have[path];
    if (!got) {
      // An optional dependency for another platform is in the lock but never installed.
      if (pkg.optional) continue;
      return `${path.slice('node_modules/'.length)} is not installed`;
    }
    if (got.version !== pkg.version) return `${path.slice('node_modules/'.length)} is ${got.version}, the lock file wants ${pkg.version}`;
  }
  return undefined;
}

/** Runs `npm ci` when needed; returns true when it did (the build ran with it). Exits on failure. */
export function ensureDeps(label) {
  const problem = depsProblem();
  if (!problem) return false;
  console.log(`[${label}] ${problem}: running npm ci (installs and builds; about a minute)…`);
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: repoRoot, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`[${label}] npm ci failed (exit ${r.status}). Check the npm registry is reachable, fix the error above and run again.`);
    process.exit(1);
  }
  return true;
}
