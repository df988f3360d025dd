#!/usr/bin/env node
// Installs the pinned real agent programs the remote tier drives (codex, claude) into
// .tools/remote/, idempotently: skipped when the stamp shows these exact versions, then
// checked by running each program's --version (drift fails loudly).
// Usage: node scripts/remote/setup.mjs   (npm run setup:remote; run by `npm test`)
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { remoteDir, remotePackages } from './paths.mjs';

const started = Date.now();
const log = (msg) => console.log(`[setup:remote +${((Date.now() - started) / 1000).toFixed(1)} s] ${msg}`);
const stampFile = join(remoteDir, '.arbor-remote-stamp.json');
const wanted = Object.fromEntries(Object.entries(remotePackages).map(([k, p]) => [k, p.version]));

function stamp() {
  try {
    return JSON.parse(readFileSync(stampFile, 'utf8'));
  } catch {
    return {};
  }
}

/** Without what an outer `npm run` exported about itself (user settings such as the registry stay). */
function npmEnv() {
  const env = { ...process.env };
  for (const key of Object.keys(env))
    if (/^npm_(config_user_agent|config_local_prefix|lifecycle_|package_|command$)/i.test(key) || key === 'INIT_CWD') delete env[key];
  return env;
}

function run(cmd, args, cwd) {
  log(`$ ${[cmd, ...args].join(' ')}   (in ${cwd})`);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: npmEnv(), stdio: ['ignore', 'inherit', 'inherit'] });
    const beat = setInterval(() => log(`… still installing`), 15_000);
    child.on('error', (err) => (clearInterval(beat), reject(err)));
    child.on('exit', (code, signal) => (clearInterval(beat), code === 0 ? resolve() : reject(new Error(`${cmd} failed (${signal ?? `exit ${code}`})`))));
  });
}

try {
  const have = stamp();
  const current = Object.entries(wanted).every(([k, v]) => have[k] === v) && Object.values(remotePackages).every((p) => existsSync(p.bin));
  if (current) log('already installed, skipping');
  else {
    mkdirSync(remoteDir, { recursive: true });
    const pj = join(remoteDir, 'package.json');
    if (!existsSync(pj))
      writeFileSync(
        pj,
        `${JSON.stringify({ name: 'arbor-remote-programs', private: true, description: 'Real agent programs for the remote tier (written by scripts/remote/setup.mjs)' }, null, 2)}\n`,
      );
    const specs = Object.values(remotePackages).map((p) => `${p.pkg}@${p.version}`);
    await run('npm', ['install', '--save-exact', '--no-audit', '--no-fund', '--no-update-notifier', ...specs], remoteDir);
    writeFileSync(stampFile, `${JSON.stringify(wanted, null, 2)}\n`);
  }
  for (const [name, p] of Object.entries(remotePackages)) {
    const r = spawnSync(p.bin, ['--version'], { encoding: 'utf8', timeout: 60_000, stdin: 'ignore', env: { PATH: process.env.PATH, HOME: process.env.HOME } });
    const out = `${r.stdout ?? ''}`.trim();
    if (r.status !== 0 || !out.includes(p.version))
      throw new Error(`${name} (${p.bin}) reports "${out || r.stderr || r.error?.message}", expected ${p.version}`);
    log(`${name}: ${out}`);
  }
  log('done');
} catch (err) {
  console.error(`[setup:remote] FAILED: ${err.message}`);
  process.exit(1);
}
