#!/usr/bin/env node
// Installs the third-party ACP client the `arbor acp` tests drive (acpx, pinned) into
// .tools/acp/, idempotently: skipped when a stamp shows that exact version installed.
// Its own folder: .tools/remote/ belongs to the remote-providers setup.
// Usage: node scripts/acp/setup.mjs   (npm run setup:acp; `npm test` runs it before mocha)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { acpToolsDir, acpxEntry, acpxVersion } from './paths.mjs';

const stampFile = join(acpToolsDir, '.arbor-acp-stamp.json');
const stamp = (() => {
  try {
    return JSON.parse(readFileSync(stampFile, 'utf8'));
  } catch {
    return {};
  }
})();

if (stamp.acpx === acpxVersion && existsSync(acpxEntry)) {
  console.log(`[setup:acp] acpx@${acpxVersion} already in ${acpToolsDir}, skipping`);
} else {
  mkdirSync(acpToolsDir, { recursive: true });
  const pkg = join(acpToolsDir, 'package.json');
  if (!existsSync(pkg))
    writeFileSync(
      pkg,
      `${JSON.stringify({ name: 'arbor-acp-tools', private: true, description: 'ACP client for the arbor acp tests (written by scripts/acp/setup.mjs)' }, null, 2)}\n`,
    );
  console.log(`[setup:acp] $ npm install acpx@${acpxVersion}   (in ${acpToolsDir})`);
  const r = spawnSync('npm', ['install', '--save-exact', '--no-audit', '--no-fund', '--no-update-notifier', `acpx@${acpxVersion}`], {
    cwd: acpToolsDir,
    stdio: 'inherit',
  });
  if (r.status !== 0) {
    console.error(`[setup:acp] npm install acpx@${acpxVersion} failed (exit ${r.status ?? r.signal}); check the npm registry is reachable.`);
    process.exit(1);
  }
  writeFileSync(stampFile, `${JSON.stringify({ acpx: acpxVersion }, null, 2)}\n`);
}
const v = spawnSync(process.execPath, [acpxEntry, '--version'], { encoding: 'utf8', timeout: 30_000 });
const got = (v.stdout ?? '').trim();
if (!got.includes(acpxVersion)) {
  console.error(`[setup:acp] ${acpxEntry} --version says "${got}${v.stderr ?? ''}", expected ${acpxVersion}`);
  process.exit(1);
}
console.log(`[setup:acp] acpx ${got}`);
