// Start the real VS Code workbench (code-server) and drive it with Debian's Chromium.
// The facts behind these flags were checked on this kind of machine (shared/E2E.md).
//
//   const server = await startCodeServer({ folder, smokeDriver: true });
//   try {
//     const wb = await openWorkbench(server.url, { folder, devExtensionPath: repoRoot });
//     try { … wb.page … } finally { await wb.close(); }
//   } finally { await server.stop(); }
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { assertToolsInstalled, chromium as chromiumPath, codeServerEntry, envWithNode24, loadPlaywright, node24 } from './paths.mjs';
import { groupMembers, pgidOf, signalGroup, waitGroupGone, waitGroupReaped } from './process-group.mjs';
import { mergeSettingsText } from './settings-file.mjs';

const HOST = '127.0.0.1';

/** Settings that make runs lighter and quieter (E2E.md); callers' settings win. */
export const defaultSettings = Object.freeze({
  'chat.disableAIFeatures': true,
  'workbench.startupEditor': 'none',
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'workbench.tips.enabled': false,
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
});

/** Chromium flags checked here (E2E.md) plus --disable-dev-shm-usage for small-/dev/shm containers. */
export const chromiumArgs = Object.freeze([
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
]);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Resolves with `promise`, or rejects after `ms` with `what` in the message; the timer is always cleared. */
export async function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A port that was free a moment ago (the OS picks it; callers retry on EADDRINUSE). */
export function freePort() {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, HOST, () => {
      const { port } = srv.address();
      srv.close(() => resolvePort(port));
    });
  });
}

// ---------------------------------------------------------------------------------------
// Process groups (process-group.mjs). code-server's helpers (extension host, file watcher,
// pty host) outlive its main process, so the whole group is signalled and watched, not just the pid.

/**
 * Memory of a process group in MiB: PSS (shared pages split between sharers, so Chromium's
 * many processes are not double-counted) where the kernel reports it, else RSS.
 */
export function groupMemoryMiB(pgid) {
  let kib = 0;
  for (const pid of groupMembers(pgid) ?? []) {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      kib += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
    } catch {
      try {
        kib += Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
      } catch {
        // exited while we looked
      }
    }
  }
  return Math.round(kib / 1024);
}

/**
 * How much CPU a process group has wanted so far, in ms: time its threads ran plus time they
 * waited, runnable, for a core (/proc/PID/task/TID/schedstat). Two readings apart tell how busy
 * it was — on a loaded machine a starved group waits more than it runs, and is busy all the
 * same. Where schedstat is missing, the CPU time alone (utime + stime); 0 without /proc.
 */
export function groupDemandMs(pgid) {
  let ms = 0;
  for (const pid of groupMembers(pgid) ?? []) {
    try {
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
        ms += (run + wait) / 1e6;
      }
    } catch {
      try {
        // After "pid (comm) ": utime is field 14, stime field 15 (clock ticks, 1/100 s).
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        ms += (Number(fields[11]) + Number(fields[12])) * 10;
      } catch {
        // exited while we looked
      }
    }
  }
  return ms;
}

// A parent that is signalled, or exits without reaching its `finally`, must not leave
// code-server or Chromium behind. On SIGINT/SIGTERM/SIGHUP every tracked group is stopped
// gracefully (bounded), then the process exits; a second signal, or any exit, SIGKILLs
// what is left and removes the temp dirs, synchronously.
const running = new Map(); // pgid -> async stop()
const tempDirs = new Set();
let exitHookInstalled = false;
function installExitHook() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const g of running.keys()) signalGroup(g, 'SIGKILL');
    for (const dir of tempDirs) {
      try {
        // A Chromium just SIGKILLed may still be writing its profile: a folder left behind is not worth a crash at exit.
        rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
      } catch {
        // left in the temp folder
      }
    }
  });
  let signalled = false;
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => {
      const code = 128 + { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 }[sig];
      if (signalled) process.exit(code); // second signal: the exit hook SIGKILLs
      signalled = true;
      process.stderr.write(`[e2e] ${sig}: stopping code-server/Chromium…\n`);
      const stops = Promise.allSettled([...running.values()].map((stop) => stop()));
      withTimeout(stops, 10_000, 'stopping after a signal')
        .catch(() => {})
        .finally(() => process.exit(code));
    });
  }
}
function trackGroup(pgid, stop) {
  installExitHook();
  running.set(pgid, stop);
}

/** A fresh temp dir that is removed even if this process exits without cleaning up. */
export function tempDir(prefix) {
  installExitHook();
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

/** Removes a dir made by tempDir(). */
export function removeTempDir(dir) {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

// ---------------------------------------------------------------------------------------

/** Environment for code-server: Node 24 first, no VS Code/Electron variables of a parent editor. */
function serverEnv(extraEnv, xdgRoot) {
  const env = {};
  for (const [k, v] of Object.entries(envWithNode24({ ...process.env, ...extraEnv }))) {
    // VSCODE_IPC_HOOK_CLI would make code-server open the folder in the parent editor;
    // ELECTRON_RUN_AS_NODE / NODE_OPTIONS from a test runner do not belong in its processes.
    if (/^(VSCODE_|ELECTRON_)/.test(k) || k === 'NODE_OPTIONS') continue;
    env[k] = v;
  }
  // Keep code-server's own config/data/cache out of $HOME.
  env.XDG_CONFIG_HOME = join(xdgRoot, 'config');
  env.XDG_DATA_HOME = join(xdgRoot, 'data');
  env.XDG_CACHE_HOME = join(xdgRoot, 'cache');
  return env;
}

function seedSettings(userDataDir, settings) {
  const file = join(userDataDir, 'User', 'settings.json');
  mkdirSync(dirname(file), { recursive: true });
  const before = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  const merged = mergeSettingsText(before, { ...defaultSettings, ...settings });
  if (!merged.ok) {
    console.warn(
      `  ${file} was left as it is: it does not parse (${merged.why}). Arbor's start settings (${Object.keys(settings).join(', ') || 'none'}) are not applied this time; fix the file to have them.`,
    );
    return;
  }
  if (merged.text !== before) writeFileSync(file, merged.text);
}

/**
 * Starts code-server on 127.0.0.1 and waits until /healthz answers.
 * @param {object} opts
 * @param {string} opts.folder                workspace folder to open (absolute or relative to cwd)
 * @param {number} [opts.port]                default: a free port (retried on EADDRINUSE)
 * @param {string} [opts.userDataDir]         default: a temp dir removed by stop()
 * @param {string} [opts.extensionsDir]       default: a temp dir removed by stop()
 * @param {boolean} [opts.smokeDriver]        --vscode-option enable-smoke-test-driver (needed for payload dev mode)
 * @param {object} [opts.settings]            merged over defaultSettings into User/settings.json
 * @param {object} [opts.env]                 extra environment (reaches the extension host)
 * @param {string} [opts.logFile]             also append code-server's output here
 * @param {number} [opts.healthTimeoutMs]     default 30 s
 * @returns {Promise<{url: string, port: number, pid: number, userDataDir: string, extensionsDir: string, output: () => string, stop: () => Promise<void>}>}
 */
export async function startCodeServer(opts = {}) {
  assertToolsInstalled();
  if (!opts.folder) throw new Error('startCodeServer: folder is required');
  const attempts = opts.port ? 1 : 3;
  let lastError;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const port = opts.port ?? (await freePort());
    try {
      return await startOnce({ ...opts, port });
    } catch (err) {
      lastError = err;
      if (!err.addressInUse) throw err;
    }
  }
  throw lastError;
}

async function startOnce({ port, folder, userDataDir, extensionsDir, smokeDriver = false, settings = {}, env = {}, logFile, healthTimeoutMs = 30_000 }) {
  const tempRoot = tempDir('arbor-code-server-');
  const ud = resolve(userDataDir ?? join(tempRoot, 'user-data'));
  const ext = resolve(extensionsDir ?? join(tempRoot, 'extensions'));
  mkdirSync(ud, { recursive: true });
  mkdirSync(ext, { recursive: true });
  seedSettings(ud, settings);
  const config = join(tempRoot, 'config.yaml');
  writeFileSync(config, 'auth: none\n'); // without --config, code-server writes one into $HOME

  const args = [
    codeServerEntry,
    '--config',
    config,
    '--auth',
    'none',
    '--bind-addr',
    `${HOST}:${port}`,
    '--user-data-dir',
    ud,
    '--extensions-dir',
    ext,
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    ...(smokeDriver ? ['--vscode-option', 'enable-smoke-test-driver'] : []),
    resolve(folder),
  ];

  // Output is kept (last lines) for error messages and optionally teed to a file.
  const tail = [];
  const log = logFile ? (mkdirSync(dirname(logFile), { recursive: true }), createWriteStream(logFile, { flags: 'a' })) : null;
  const collect = (chunk) => {
    log?.write(chunk);
    for (const line of chunk.toString().split('\n')) {
      if (line.trim()) tail.push(line);
    }
    if (tail.length > 200) tail.splice(0, tail.length - 200);
  };
  const output = () => tail.join('\n');

  const child = spawn(node24, args, {
    detached: true, // its own process group, so stop() reaches every helper
    env: serverEnv(env, tempRoot),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pgid = child.pid;
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  let exited = null;
  const exitPromise = new Promise((r) => child.on('exit', (code, signal) => r((exited = { code, signal }))));
  const spawnError = new Promise((_, reject) => child.on('error', reject));
  spawnError.catch(() => {});

  let stopping;
  const stop = ({ timeoutMs = 10_000 } = {}) =>
    (stopping ??= (async () => {
      if (pgid) {
        signalGroup(pgid, 'SIGTERM');
        await withTimeout(exitPromise, timeoutMs, 'code-server main process exit').catch(() => {});
        if (!(await waitGroupGone(pgid, timeoutMs))) {
          const left = groupMembers(pgid);
          process.stderr.write(`[e2e] code-server group ${pgid} still alive after SIGTERM (${left?.join(' ') ?? '?'}); SIGKILL\n`);
          signalGroup(pgid, 'SIGKILL');
          await waitGroupGone(pgid, 5_000);
        }
        running.delete(pgid);
        await waitGroupReaped(pgid);
      }
      await new Promise((r) => (log ? log.end(r) : r()));
      removeTempDir(tempRoot);
    })());

  if (pgid) trackGroup(pgid, stop);

  const url = `http://${HOST}:${port}/`;
  try {
    const deadline = Date.now() + healthTimeoutMs;
    for (;;) {
      if (exited) {
        const err = new Error(`code-server exited (${exited.signal ?? `code ${exited.code}`}) before it was ready:\n${output()}`);
        err.addressInUse = /EADDRINUSE/.test(output());
        throw err;
      }
      if (Date.now() > deadline) throw new Error(`code-server not healthy on ${url} after ${healthTimeoutMs} ms:\n${output()}`);
      try {
        const res = await Promise.race([fetch(`${url}healthz`, { signal: AbortSignal.timeout(2_000) }), spawnError]);
        if (res.status === 200) break;
      } catch (err) {
        if (err?.code === 'ENOENT' || err?.syscall?.startsWith?.('spawn')) throw err;
        // not listening yet
      }
      await sleep(100);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, port, pid: pgid, userDataDir: ud, extensionsDir: ext, output, stop };
}

/** The process group of the Chromium browser process using `profileDir` (Linux; else undefined). */
function browserProcessGroup(profileDir) {
  if (process.platform !== 'linux') return undefined;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (!argv.some((a) => a === `--user-data-dir=${profileDir}`) || argv.some((a) => a.startsWith('--type='))) continue;
      const pgid = pgidOf(name);
      // Never our own group: signalling it would kill this process too.
      return pgid === pgidOf('self') ? undefined : pgid;
    } catch {
      // exited while we looked
    }
  }
  return undefined;
}

/** Pids (Linux) whose command line mentions `marker`, other than this process. */
function processesMentioning(marker) {
  if (process.platform !== 'linux') return [];
  const pids = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(marker)) pids.push(Number(name));
    } catch {
      // exited while we looked
    }
  }
  return pids;
}

/** Waits up to 3 s for processes mentioning `marker` to exit, then SIGKILLs the rest. */
async function killStragglers(marker) {
  const deadline = Date.now() + 3_000;
  while (Date.now() < deadline && processesMentioning(marker).length) await sleep(100);
  for (const pid of processesMentioning(marker)) {
    process.stderr.write(`[e2e] killing leftover process ${pid} of ${marker}\n`);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** `vscode-remote://127.0.0.1:PORT/abs/path` for a path on the code-server machine. */
export function remoteUri(serverUrl, path) {
  return `vscode-remote://${new URL(serverUrl).host}${pathToFileURL(resolve(path)).pathname}`;
}

/**
 * The workbench URL; with devExtensionPath/testsPath it uses the smoke-test-driver payload
 * (code-server must run with smokeDriver: true).
 */
export function workbenchUrl(serverUrl, { folder, devExtensionPath, testsPath } = {}) {
  const u = new URL(serverUrl);
  if (folder) u.searchParams.set('folder', resolve(folder));
  const payload = [];
  if (devExtensionPath) payload.push(['extensionDevelopmentPath', remoteUri(serverUrl, devExtensionPath)]);
  if (testsPath) payload.push(['extensionTestsPath', remoteUri(serverUrl, testsPath)]);
  if (payload.length) u.searchParams.set('payload', JSON.stringify(payload));
  return u.href;
}

/**
 * Opens the workbench in Debian's Chromium (playwright-core, fresh profile).
 * The returned close() must be called in a finally; on any error here it is called already.
 * @param {string} serverUrl  from startCodeServer
 * @param {object} opts
 * @param {string} [opts.folder]
 * @param {string} [opts.devExtensionPath]   load this extension in development mode
 * @param {string} [opts.testsPath]          run extension-host tests from this file
 * @param {Record<string, Function>} [opts.expose]  page.exposeFunction before navigation
 * @param {boolean} [opts.headless]          default true
 * @param {number} [opts.timeoutMs]          launch and navigation timeout, default 60 s
 * @param {(msg: import('playwright-core').ConsoleMessage) => void} [opts.onConsole]
 * @param {boolean} [opts.ignoreHTTPSErrors]  accept self-signed certificates (a test's local https server)
 */
export async function openWorkbench(serverUrl, opts = {}) {
  const { chromium } = await loadPlaywright();
  const { expose = {}, headless = true, timeoutMs = 60_000, viewport = { width: 1400, height: 900 }, onConsole } = opts;
  const profileDir = tempDir('arbor-chromium-');
  let context;
  let browserGroup;
  let closing;
  const close = () =>
    (closing ??= (async () => {
      // Playwright kills the browser on close; bounded, in case Chromium hangs on exit.
      if (context) await withTimeout(context.close(), 15_000, 'closing Chromium').catch((err) => process.stderr.write(`[e2e] ${err.message}\n`));
      // Then make sure no Chromium helper (zygote, renderer, GPU) outlives the browser.
      if (browserGroup && !(await waitGroupGone(browserGroup, 5_000))) {
        signalGroup(browserGroup, 'SIGKILL');
        await waitGroupGone(browserGroup, 5_000);
      }
      if (browserGroup) {
        running.delete(browserGroup);
        await waitGroupReaped(browserGroup);
      }
      // Chromium's crash handlers start in process groups of their own; they carry the
      // profile dir in their --database path (XDG_CONFIG_HOME below) and normally exit
      // with the browser.
      await killStragglers(profileDir);
      removeTempDir(profileDir);
    })());
  try {
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: chromiumPath,
      headless,
      args: [...chromiumArgs],
      // Chromium's config (crash reports) under the profile, not ~/.config/chromium.
      env: { ...process.env, XDG_CONFIG_HOME: join(profileDir, '.config') },
      viewport,
      timeout: timeoutMs,
      ignoreHTTPSErrors: opts.ignoreHTTPSErrors === true,
    });
    // Playwright starts Chromium in a process group of its own; find it by the profile dir.
    browserGroup = browserProcessGroup(profileDir);
    if (browserGroup) trackGroup(browserGroup, close);
    context.setDefaultTimeout(timeoutMs);
    const page = context.pages()[0] ?? (await context.newPage());
    if (onConsole) page.on('console', onConsole);
    for (const [name, fn] of Object.entries(expose)) await page.exposeFunction(name, fn);
    const url = workbenchUrl(serverUrl, opts);
    await page.goto(url, { waitUntil: 'domcontentloaded', timeout: timeoutMs });
    return { context, page, url, browserPgid: browserGroup, close };
  } catch (err) {
    await close();
    throw err;
  }
}
