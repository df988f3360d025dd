#!/usr/bin/env node
// A stand-in for the VS Code executable, for @vscode/test-electron's runTests and
// @vscode/test-cli's useInstallation.fromPath, where desktop VS Code cannot be downloaded.
// It takes the Electron-style arguments, runs the extension-host tests in code-server
// (the real workbench, Node extension host) shown by headless Chromium, forwards the
// run's log to stdout and exits with the run's exit code.
//
//   launcher.mjs [folder] --extensionDevelopmentPath=DIR --extensionTestsPath=FILE
//                [--user-data-dir=DIR] [--extensions-dir=DIR] [other flags: ignored]
//
// Environment: ARBOR_E2E_TIMEOUT_MS (whole run, default 600000), ARBOR_E2E_VERBOSE=1
// (also print the workbench's own log lines), ARBOR_E2E_LOG_DIR (where code-server's
// output and the workbench logs go; default test-artifacts/host-tests).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { format } from 'node:util';
import { openWorkbench, removeTempDir, startCodeServer, tempDir, withTimeout } from './code-server.mjs';
import { artifactsDir } from './paths.mjs';

const VALUE_FLAGS = new Set(['extensionDevelopmentPath', 'extensionTestsPath', 'user-data-dir', 'extensions-dir']);

/** Electron-style argv → {extensionDevelopmentPath[], extensionTestsPath, user-data-dir, extensions-dir, folders[], ignored[]}. */
export function parseArgs(argv) {
  const out = { extensionDevelopmentPath: [], folders: [], ignored: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const m = /^--([^=]+)(?:=(.*))?$/s.exec(arg);
    if (!m) {
      out.folders.push(arg);
      continue;
    }
    const [, name, inline] = m;
    if (!VALUE_FLAGS.has(name)) {
      out.ignored.push(arg);
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`${arg} needs a value`);
    if (name === 'extensionDevelopmentPath') out.extensionDevelopmentPath.push(value);
    else out[name] = value;
  }
  return out;
}

const say = (msg) => process.stdout.write(`[launcher] ${msg}\n`);

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.extensionDevelopmentPath.length !== 1) {
    throw new Error(`exactly one --extensionDevelopmentPath is supported (got ${args.extensionDevelopmentPath.length})`);
  }
  if (!args.extensionTestsPath) throw new Error('--extensionTestsPath is required');
  if (args.folders.length > 1) throw new Error(`one folder at most (got ${args.folders.join(', ')})`);
  if (args.ignored.length) say(`ignoring ${args.ignored.join(' ')}`);

  const started = Date.now();
  const timeoutMs = Number(process.env.ARBOR_E2E_TIMEOUT_MS ?? 600_000);
  const verbose = process.env.ARBOR_E2E_VERBOSE === '1';
  const logDir = resolve(process.env.ARBOR_E2E_LOG_DIR ?? join(artifactsDir, 'host-tests'));
  rmSync(logDir, { recursive: true, force: true });
  mkdirSync(logDir, { recursive: true });

  // Without a folder VS Code opens an empty window; give code-server an empty temp folder.
  const tempFolder = args.folders.length ? null : tempDir('arbor-host-tests-');
  const folder = resolve(args.folders[0] ?? tempFolder);

  let server;
  let workbench;
  try {
    server = await startCodeServer({
      folder,
      userDataDir: args['user-data-dir'],
      extensionsDir: args['extensions-dir'],
      smokeDriver: true,
      logFile: join(logDir, 'code-server.log'),
    });
    say(`code-server ${server.url} ready after ${Date.now() - started} ms`);

    let finish;
    const finished = new Promise((r) => (finish = r));
    workbench = await openWorkbench(server.url, {
      folder,
      devExtensionPath: args.extensionDevelopmentPath[0],
      testsPath: args.extensionTestsPath,
      expose: {
        // Called by the workbench when the test run's extension host exits.
        codeAutomationExit: (code, logs) => {
          for (const { relativePath, contents } of Array.isArray(logs) ? logs : []) {
            const file = join(logDir, 'workbench-logs', relativePath);
            mkdirSync(dirname(file), { recursive: true });
            writeFileSync(file, contents);
          }
          finish(Number(code));
        },
        // Every workbench log line; the extension host's console (mocha's report) comes
        // through here as info lines.
        codeAutomationLog: (level, message) => {
          const text = Array.isArray(message) ? format(...message) : String(message);
          if (verbose) process.stdout.write(`[${level}] ${text}\n`);
          else if (!isWorkbenchChatter(level, text)) (level === 'error' ? process.stderr : process.stdout).write(`${text}\n`);
        },
      },
    });
    const { page } = workbench;
    page.on('crash', () => finish(Promise.reject(new Error('the workbench page crashed'))));
    page.on('pageerror', (err) => verbose && say(`page error: ${err.message}`));
    const code = await withTimeout(finished, timeoutMs, 'the extension-host test run (codeAutomationExit)');
    say(`tests finished with exit code ${code} after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return code;
  } catch (err) {
    if (server) say(`code-server output (last lines):\n${server.output().split('\n').slice(-30).join('\n')}`);
    throw err;
  } finally {
    // Both at once: each waits for its process group to be gone (and reaped).
    await Promise.allSettled([workbench?.close(), server?.stop()]);
    if (tempFolder) removeTempDir(tempFolder);
  }
}

// The workbench log carries its own chatter besides the extension host's console (mocha's
// report). Only cosmetic: with ARBOR_E2E_VERBOSE=1 everything is printed.
const CHATTER = [
  /^Resolv(ing|ed) connection token/,
  /^Creating a socket/,
  /^\[(reconnection-grace-time|Service Worker|AgentHost:remote|AccountPolicyGate|driver)\]/,
  /^Updating additional builtin extensions cache/,
  /ENOTFOUND open-vsx\.org|vsda/, // offline: the extension gallery and vsda are unreachable
];
function isWorkbenchChatter(level, text) {
  return level === 'trace' || level === 'debug' || CHATTER.some((re) => re.test(text));
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`[launcher] FAILED: ${err?.stack ?? err}\n`);
    process.exit(1);
  },
);
