#!/usr/bin/env node
// Installs everything the end-to-end tests need, idempotently: Debian packages (only the
// missing ones), then Node 24 + code-server into .tools/code-server and playwright-core +
// vsce into .tools/driver, each skipped when a stamp shows that exact version installed.
// Usage: node scripts/e2e/setup.mjs   (npm run setup:e2e)
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  aptPackages,
  chromium,
  codeServerEntry,
  codeServerPackage,
  codeServerToolDir,
  driverDir,
  envWithNode24,
  node24,
  node24Dir,
  node24Headers,
  versions,
  vsceEntry,
} from './paths.mjs';

const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
const TOTAL = 5;
let step = 0;
const log = (msg) => console.log(`[setup:e2e ${step}/${TOTAL} +${elapsed()}] ${msg}`);
const begin = (title) => {
  step += 1;
  log(title);
};

/** Runs a command with inherited output; prints a heartbeat so long installs show progress. */
function run(cmd, args, { cwd, env, what } = {}) {
  log(`$ ${[cmd, ...args].join(' ')}${cwd ? `   (in ${cwd})` : ''}`);
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { cwd, env: env ?? process.env, stdio: ['ignore', 'inherit', 'inherit'] });
    const heartbeat = setInterval(() => log(`… still ${what ?? cmd}`), 15_000);
    child.on('error', (err) => {
      clearInterval(heartbeat);
      reject(new Error(`${cmd} could not start: ${err.message}`));
    });
    child.on('exit', (code, signal) => {
      clearInterval(heartbeat);
      if (code === 0) resolvePromise();
      else reject(new Error(`${cmd} ${args.join(' ')} failed (${signal ?? `exit ${code}`})`));
    });
  });
}

function readStamp(dir) {
  try {
    return JSON.parse(readFileSync(join(dir, '.arbor-e2e-stamp.json'), 'utf8'));
  } catch {
    return {};
  }
}
const writeStamp = (dir, stamp) => writeFileSync(join(dir, '.arbor-e2e-stamp.json'), `${JSON.stringify(stamp, null, 2)}\n`);

function ensurePackageJson(dir, name, description) {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'package.json');
  if (!existsSync(file)) {
    writeFileSync(file, `${JSON.stringify({ name, private: true, description }, null, 2)}\n`);
  }
}

const npmFlags = ['--save-exact', '--no-audit', '--no-fund', '--no-update-notifier'];

/**
 * The environment for a nested npm: without what an outer `npm run setup:e2e` exported
 * about itself. npm_config_user_agent ("… node/v20 …") would otherwise be inherited, and
 * code-server's postinstall reads the Node version from it and refuses to install.
 * User settings (registry, cafile, …) stay.
 */
function npmEnv(base = process.env) {
  const env = { ...base };
  for (const key of Object.keys(env)) {
    if (
      /^npm_(config_user_agent|config_local_prefix|config_nodedir|lifecycle_|package_|node_execpath$|execpath$|command$)/i.test(key) ||
      key === 'NODE' ||
      key === 'INIT_CWD'
    ) {
      delete env[key];
    }
  }
  return env;
}

// 1. Debian packages ---------------------------------------------------------------------
async function apt() {
  begin(`Debian packages: ${aptPackages.join(' ')}`);
  // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format syntax, not a JS template
  const installed = (pkg) => spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' }).stdout?.includes('install ok installed');
  const missing = aptPackages.filter((pkg) => !installed(pkg));
  if (missing.length === 0) {
    log('all present, skipping (no apt-get update)');
    return;
  }
  log(`missing: ${missing.join(' ')}`);
  const sudo = process.getuid?.() === 0 ? [] : ['sudo', '-n'];
  const [cmd, ...pre] = sudo.length ? sudo : ['apt-get'];
  const aptArgs = (args) => (sudo.length ? [...pre, 'apt-get', ...args] : args);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const lock = ['-o', 'DPkg::Lock::Timeout=300'];
  await run(cmd, aptArgs(['update', '-q', ...lock]), { env, what: 'apt-get update' });
  await run(
    cmd,
    aptArgs([
      'install',
      '-y',
      '-q',
      ...lock,
      '-o',
      'Dpkg::Use-Pty=0',
      '-o',
      'Dpkg::Options::=--force-confdef',
      '-o',
      'Dpkg::Options::=--force-confold',
      ...missing,
    ]),
    { env, what: `installing ${missing.join(' ')}` },
  );
}

// 2. Node 24 -----------------------------------------------------------------------------
async function node() {
  begin(`node@${versions.node} into ${node24Dir}`);
  const headers = join(node24Headers, 'include', 'node', 'common.gypi');
  if (readStamp(node24Dir).node === versions.node && existsSync(node24) && existsSync(headers)) {
    log(`already installed (${node24}), skipping`);
    return;
  }
  // Its own project: another `npm install` next to it would prune the binary's headers.
  rmSync(node24Dir, { recursive: true, force: true });
  ensurePackageJson(node24Dir, 'arbor-e2e-node24', 'Node 24 for code-server (written by scripts/e2e/setup.mjs)');
  await run('npm', ['install', ...npmFlags, `node@${versions.node}`], { cwd: node24Dir, env: npmEnv(), what: 'installing node' });
  const got = spawnSync(node24, ['--version'], { encoding: 'utf8' }).stdout?.trim();
  if (got !== `v${versions.node}`) throw new Error(`${node24} reports ${got ?? 'nothing'}, expected v${versions.node}`);
  if (!existsSync(headers)) throw new Error(`Node 24 headers missing: ${headers}`);
  writeStamp(node24Dir, { node: versions.node });
}

// 3. code-server -------------------------------------------------------------------------
async function codeServer() {
  begin(
    `code-server@${versions.codeServer} into ${codeServerToolDir} (Node 24 first on PATH; ~600 MB; 5 min on a warm npm cache, much longer on a cold one or a busy machine)`,
  );
  const stamp = readStamp(codeServerToolDir);
  if (stamp.node === versions.node && stamp.codeServer === versions.codeServer && existsSync(codeServerEntry)) {
    log('already installed, skipping');
    return;
  }
  ensurePackageJson(codeServerToolDir, 'arbor-e2e-code-server', 'code-server for Arbor end-to-end tests (written by scripts/e2e/setup.mjs)');
  // A half-finished install (failed postinstall) or one built for another Node is redone
  // from scratch, since `npm install` would call it up to date and skip the native build.
  rmSync(codeServerPackage, { recursive: true, force: true });
  const env = {
    ...envWithNode24(npmEnv()),
    // The machine's npmrc may point node-gyp at /usr's (Node 20) headers: build the native
    // modules against the Node 24 that will load them.
    npm_config_nodedir: node24Headers,
  };
  await run('npm', ['install', ...npmFlags, `code-server@${versions.codeServer}`], {
    cwd: codeServerToolDir,
    env,
    what: 'installing code-server (npm + native module build)',
  });
  writeStamp(codeServerToolDir, { node: versions.node, codeServer: versions.codeServer });
}

// 4. Driver: playwright-core + vsce ------------------------------------------------------
async function driver() {
  begin(`playwright-core@${versions.playwrightCore} and @vscode/vsce@${versions.vsce} into ${driverDir}`);
  const stamp = readStamp(driverDir);
  if (stamp.playwrightCore === versions.playwrightCore && stamp.vsce === versions.vsce && existsSync(vsceEntry)) {
    log('already installed, skipping');
    return;
  }
  ensurePackageJson(driverDir, 'arbor-e2e-driver', 'playwright-core and vsce for Arbor end-to-end tests (written by scripts/e2e/setup.mjs)');
  // Never `playwright`: its install downloads browsers. Debian's chromium is used instead.
  await run('npm', ['install', ...npmFlags, `playwright-core@${versions.playwrightCore}`, `@vscode/vsce@${versions.vsce}`], {
    cwd: driverDir,
    env: envWithNode24(npmEnv()),
    what: 'installing playwright-core and vsce',
  });
  writeStamp(driverDir, { playwrightCore: versions.playwrightCore, vsce: versions.vsce });
}

// 5. Check -------------------------------------------------------------------------------
function check() {
  begin('checking versions');
  const version = (cmd, args, env) => {
    const r = spawnSync(cmd, args, { encoding: 'utf8', env: env ?? process.env, timeout: 30_000 });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.error?.message ?? r.stderr}`);
    return r.stdout.trim().split('\n')[0];
  };
  log(`node24:      ${version(node24, ['--version'])}`);
  // An explicit --config: without one code-server writes ~/.config/code-server/config.yaml.
  const config = join(codeServerToolDir, 'version-check.yaml');
  writeFileSync(config, 'auth: none\n');
  log(`code-server: ${version(node24, [codeServerEntry, '--config', config, '--version'], envWithNode24())}`);
  log(`chromium:    ${version(chromium, ['--version'])}`);
  log(`vsce:        ${version(node24, [vsceEntry, '--version'])}`);
  // The placement tests start their own sshd and containers (decision 0071): the programs must be there.
  if (!existsSync('/usr/sbin/sshd')) throw new Error('/usr/sbin/sshd is missing after installing openssh-server');
  log(`podman:      ${version('podman', ['--version'])}`);
  log(`runc:        ${version('runc', ['--version'])}`);
}

try {
  await apt();
  await node();
  await codeServer();
  await driver();
  check();
  log(`done in ${elapsed()}`);
} catch (err) {
  console.error(`[setup:e2e] FAILED at step ${step}/${TOTAL} after ${elapsed()}: ${err.message}`);
  process.exit(1);
}
