// The webview under a real browser, for the webview bench and screenshots: builds the
// bundle and the scripted-host harness (webview/dev/) into a temp folder, serves them on
// 127.0.0.1, and drives Debian's chromium through playwright-core. Nothing here fakes a
// figure: when the browser or the driver is missing, `openBrowser` returns why, and the
// caller reports its figures as MISS with that reason.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './repo-root';

export { repoRoot };

const run = promisify(execFile);

/** The few playwright-core calls we use (typed here: the package may live outside node_modules). */
export interface Page {
  goto(url: string, opts?: { waitUntil?: 'load' | 'domcontentloaded' | 'networkidle' }): Promise<unknown>;
  /** A string is evaluated as an expression (a function in it is not called: embed the call). */
  evaluate<R>(script: string): Promise<R>;
  waitForFunction(script: string, arg?: unknown, opts?: { timeout?: number }): Promise<unknown>;
  screenshot(opts: { path: string; fullPage?: boolean; clip?: { x: number; y: number; width: number; height: number } }): Promise<unknown>;
  click(selector: string): Promise<void>;
  hover(selector: string): Promise<void>;
  focus(selector: string): Promise<void>;
  keyboard: { press(key: string): Promise<void>; type(text: string): Promise<void> };
  reload(opts?: { waitUntil?: 'load' }): Promise<unknown>;
  setViewportSize(size: { width: number; height: number }): Promise<void>;
  on(event: 'console', fn: (msg: { type(): string; text(): string }) => void): void;
  on(event: 'pageerror', fn: (err: Error) => void): void;
  close(): Promise<void>;
}

interface Browser {
  newPage(opts?: { viewport?: { width: number; height: number }; deviceScaleFactor?: number }): Promise<Page>;
  version(): string;
  close(): Promise<void>;
}

interface Playwright {
  chromium: { launch(opts: { executablePath: string; headless: boolean; args: string[] }): Promise<Browser> };
}

/** playwright-core from the project's devDependencies, else from the e2e driver folder (.tools/driver). */
function loadPlaywright(root: string): { pw: Playwright; from: string } | undefined {
  for (const base of [root, path.join(root, '.tools', 'driver')]) {
    try {
      const resolved = require.resolve('playwright-core', { paths: [base] });
      return { pw: require(resolved) as Playwright, from: path.relative(root, resolved) };
    } catch {
      // not there; try the next place
    }
  }
  return undefined;
}

/** Chromium's path, or why there is none. A path set in the environment is used or refused, never skipped. */
function findChromium(): { path: string } | { missing: string } {
  for (const name of ['ARBOR_CHROMIUM', 'ARBOR_E2E_CHROMIUM'] as const) {
    const set = process.env[name];
    if (set)
      return fs.existsSync(set)
        ? { path: set }
        : { missing: `${name}=${set} does not exist (unset it to use /usr/bin/chromium, or point it at a chromium binary)` };
  }
  const found = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => fs.existsSync(p));
  return found ? { path: found } : { missing: 'chromium is not installed (npm run setup:e2e installs it, or set ARBOR_CHROMIUM)' };
}

/**
 * Builds dist-like folders under `dir`: `webview/` (the extension's bundle, vite.config.ts)
 * and `webview-harness/` (vite.harness.config.ts). Built fresh so the figures are the
 * current source's, and without touching the repository's dist/.
 */
export async function buildWebview(dir: string): Promise<{ jsBytes: number; cssBytes: number; ms: number }> {
  const root = repoRoot();
  const vite = path.join(path.dirname(require.resolve('vite/package.json', { paths: [root] })), 'bin', 'vite.js');
  const t0 = Date.now();
  await run(process.execPath, [vite, 'build', '--logLevel', 'warn', '--outDir', path.join(dir, 'webview'), '--emptyOutDir'], { cwd: root });
  await run(
    process.execPath,
    [vite, 'build', '-c', 'vite.harness.config.ts', '--logLevel', 'warn', '--outDir', path.join(dir, 'webview-harness'), '--emptyOutDir'],
    { cwd: root },
  );
  return {
    jsBytes: fs.statSync(path.join(dir, 'webview', 'index.js')).size,
    cssBytes: fs.statSync(path.join(dir, 'webview', 'index.css')).size,
    ms: Date.now() - t0,
  };
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.ttf': 'font/ttf',
  '.map': 'application/json',
  '.json': 'application/json',
};

/** A static file server for `dir` on 127.0.0.1 (an ephemeral port). */
export async function serve(dir: string): Promise<{ url: string; close(): Promise<void> }> {
  const base = path.resolve(dir);
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const file = path.resolve(base, `.${decodeURIComponent(url.pathname)}`);
    if (!file.startsWith(base + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface BrowserSession {
  browser: Browser;
  /** Where playwright-core was found and which chromium runs. */
  describe: string;
}

/**
 * Chrome's own UI that a new window loads in a renderer of its own (the address bar's popups):
 * VS Code's webviews run in Electron, which has none. Started with every fresh page, it took
 * 40–140 ms of CPU inside the bench's timed first frame on 2 cores (decision 0105).
 */
const BROWSER_UI_OFF = ['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup', 'WebUIOmniboxFullPopup'];

/**
 * A launcher for `chromium` that adds `BROWSER_UI_OFF` to the features playwright disables.
 * Chromium keeps only the last `--disable-features`, and playwright's launch does not merge a
 * second one into its own, so the launcher appends one switch holding both lists.
 */
function launcherFor(chromium: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-chromium-'));
  const file = path.join(dir, 'chromium');
  const script = [
    '#!/bin/sh',
    'last=--disable-features=',
    'for a do case $a in --disable-features=*) last=$a, ;; esac; done',
    `exec ${shellQuote(chromium)} "$@" "$last"${BROWSER_UI_OFF.join(',')}`,
    '',
  ].join('\n');
  fs.writeFileSync(file, script, { mode: 0o755 });
  return file;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Launches headless chromium, or returns why it cannot. */
export async function openBrowser(): Promise<BrowserSession | string> {
  const root = repoRoot();
  const pw = loadPlaywright(root);
  if (!pw) return 'playwright-core is not installed (neither a devDependency nor in .tools/driver; npm run setup:e2e installs it)';
  const chromium = findChromium();
  if ('missing' in chromium) return chromium.missing;
  const executablePath = chromium.path;
  const launcher = launcherFor(executablePath);
  try {
    const browser = await pw.pw.chromium.launch({
      executablePath: launcher,
      headless: true,
      // The bench runs as root in a container: chromium's sandbox needs user namespaces.
      args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-background-timer-throttling', '--disable-renderer-backgrounding'],
    });
    return { browser, describe: `${executablePath} ${browser.version()} (its address bar's popups off), playwright-core from ${pw.from}` };
  } finally {
    // The launcher exec'd chromium; nothing runs it again.
    fs.rmSync(path.dirname(launcher), { recursive: true, force: true });
  }
}

/** Opens the harness page and waits until the webview has announced itself. */
export async function openHarness(
  session: BrowserSession,
  baseUrl: string,
  query: Record<string, string>,
  viewport = { width: 420, height: 900 },
): Promise<Page> {
  const page = await session.browser.newPage({ viewport });
  const q = new URLSearchParams({ bundle: '../webview/', ...query }).toString();
  await page.goto(`${baseUrl}/webview-harness/harness.html?${q}`, { waitUntil: 'load' });
  await page.waitForFunction(`window.__posted && window.__posted.some((m) => m.type === 'webview/ready')`, undefined, { timeout: 15_000 });
  return page;
}
