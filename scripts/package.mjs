// `npm run package`: build, then pack the .vsix (scripts/vsix.mjs) into arbor-<version>.vsix.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './e2e/paths.mjs';
import { packVsix } from './vsix.mjs';

const run = (cmd, args) => {
  const r = spawnSync(cmd, args, { cwd: repoRoot, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
};
run('npm', ['run', 'build', '--silent']);
run(process.execPath, [join(repoRoot, 'scripts', 'e2e', 'setup.mjs')]);
const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
const out = join(repoRoot, `arbor-${version}.vsix`);
const bytes = packVsix(out);
console.log(`packaged ${out}: ${(bytes / 1048576).toFixed(2)} MB (${bytes.toLocaleString('en-US')} bytes)`);
