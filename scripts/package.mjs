// `npm run package`: build, then `vsce package` (offline, under the Node 24 that
// scripts/e2e/setup.mjs installs, since vsce 4 needs Node >= 22) into arbor-<version>.vsix.
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { envWithNode24, node24, repoRoot, vsceEntry } from './e2e/paths.mjs';

const run = (cmd, args, env) => {
  const r = spawnSync(cmd, args, { cwd: repoRoot, stdio: 'inherit', env });
  if (r.status !== 0) process.exit(r.status ?? 1);
};
run('npm', ['run', 'build', '--silent']);
run(process.execPath, [join(repoRoot, 'scripts', 'e2e', 'setup.mjs')]);
const { version } = JSON.parse((await import('node:fs')).readFileSync(join(repoRoot, 'package.json'), 'utf8'));
const out = join(repoRoot, `arbor-${version}.vsix`);
run(
  node24,
  [
    vsceEntry,
    'package',
    '--no-dependencies',
    '--allow-missing-repository',
    '--skip-license',
    // The README's screenshots are relative (docs/screenshots): no repository URL to rewrite them to.
    '--no-rewrite-relative-links',
    '-o',
    out,
  ],
  envWithNode24(),
);
console.log(`packaged ${out}: ${(statSync(out).size / 1048576).toFixed(2)} MB`);
