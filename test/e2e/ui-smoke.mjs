// UI smoke test on the real VS Code workbench (code-server) in headless Chromium:
// the built extension (dist/) loads in development mode, its activity-bar icon opens the
// Arbor view, and the Svelte webview renders inside it.
// Usage: npm run test:ui   (after npm run setup:e2e and npm run build)
// Writes test-artifacts/ui-smoke.png (or ui-smoke-failure.png), ui-smoke-code-server.log
// and ui-smoke-console.log. ARBOR_E2E_HEADED=1 shows the browser (needs a display).
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { groupMemoryMiB, openWorkbench, removeTempDir, startCodeServer, tempDir } from '../../scripts/e2e/code-server.mjs';
import { artifactsDir, missingTools, repoRoot } from '../../scripts/e2e/paths.mjs';

const EXTENSION_ID = 'arbor-dev.arbor';
const CONTAINER_TITLE = 'Arbor';
const SELECTORS = {
  workbench: '.monaco-workbench .part.activitybar',
  activityIcon: `.activitybar a.action-label[aria-label^="${CONTAINER_TITLE}"]`,
  webview: `iframe.webview.ready[src*="extensionId=${EXTENSION_ID}"]`,
};
const TIMEOUT = {
  workbench: 60_000, // first load compiles nothing, but 2 cores under load can be slow
  activityIcon: 30_000, // appears once the extension's contributions are registered
  webview: 45_000, // view resolution + webview iframe + Svelte mount
};

const started = Date.now();
const seconds = () => ((Date.now() - started) / 1000).toFixed(1);
const step = (msg) => console.log(`[ui-smoke +${seconds()} s] ${msg}`);

class SmokeFailure extends Error {}

/** Runs `fn`; turns a timeout into a message that says which step failed. */
async function expectStep(what, fn) {
  try {
    return await fn();
  } catch (err) {
    throw new SmokeFailure(`${what}: ${err.message.split('\n')[0]}`);
  }
}

/** Polls a locator's text until it contains `needle`; returns the text. */
async function waitForText(locator, needle, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let text = '';
  while (Date.now() < deadline) {
    text = (await locator.textContent({ timeout: Math.max(1, deadline - Date.now()) }).catch(() => '')) ?? '';
    if (text.includes(needle)) return text;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`text never contained ${JSON.stringify(needle)} within ${timeoutMs} ms (last: ${JSON.stringify(text.trim().slice(0, 200))})`);
}

async function main() {
  const missing = missingTools();
  if (missing.length) throw new SmokeFailure(`E2E tools missing (${missing.join(', ')}). Run: npm run setup:e2e`);
  for (const built of ['dist/extension.js', 'dist/webview/index.js']) {
    if (!existsSync(join(repoRoot, built))) throw new SmokeFailure(`${built} is missing. Run: npm run build`);
  }
  mkdirSync(artifactsDir, { recursive: true });
  const shot = join(artifactsDir, 'ui-smoke.png');
  const failShot = join(artifactsDir, 'ui-smoke-failure.png');
  const serverLog = join(artifactsDir, 'ui-smoke-code-server.log');
  const consoleLog = join(artifactsDir, 'ui-smoke-console.log');
  for (const f of [shot, failShot, serverLog, consoleLog]) rmSync(f, { force: true });

  const folder = tempDir('arbor-ui-smoke-');
  writeFileSync(join(folder, 'README.md'), '# UI smoke workspace\n');
  const consoleLines = [];
  let server;
  let workbench;
  let peakMiB = 0;
  let sampler;
  try {
    server = await startCodeServer({ folder, smokeDriver: true, logFile: serverLog });
    step(`code-server ${server.url} healthy`);
    workbench = await openWorkbench(server.url, {
      folder,
      devExtensionPath: repoRoot,
      headless: process.env.ARBOR_E2E_HEADED !== '1',
      onConsole: (msg) => consoleLines.push(`[${msg.type()}] ${msg.text()}`),
    });
    const { page } = workbench;
    sampler = setInterval(() => {
      const total = groupMemoryMiB(server.pid) + (workbench.browserPgid ? groupMemoryMiB(workbench.browserPgid) : 0);
      peakMiB = Math.max(peakMiB, total);
    }, 500);
    page.on('pageerror', (err) => consoleLines.push(`[pageerror] ${err.message}`));

    try {
      await expectStep('workbench did not appear', () =>
        page.locator(SELECTORS.workbench).waitFor({ state: 'visible', timeout: TIMEOUT.workbench }),
      );
      step(`workbench visible (title: ${JSON.stringify(await page.title())})`);

      const icon = page.locator(SELECTORS.activityIcon);
      await expectStep(`Arbor activity-bar icon (${SELECTORS.activityIcon}) did not appear; is the extension loading?`, () =>
        icon.waitFor({ state: 'visible', timeout: TIMEOUT.activityIcon }),
      );
      await expectStep('clicking the Arbor icon failed', () => icon.click({ timeout: 10_000 }));
      step('Arbor activity-bar icon clicked');

      // A webview view is two frames deep: the host iframe, then #active-frame with our HTML.
      const app = page.frameLocator(SELECTORS.webview).frameLocator('#active-frame').locator('#app');
      const text = await expectStep('the Arbor webview did not render', () => waitForText(app, 'Arbor', TIMEOUT.webview));
      step(`webview rendered: ${JSON.stringify(text.replace(/\s+/g, ' ').trim())}`);
      // Not a failure of this smoke test (it checks that the panel renders), but worth seeing.
      const alerts = await app.locator('[role="alert"]').allTextContents().catch(() => []);
      for (const alert of alerts) console.warn(`[ui-smoke] WARNING: the webview shows an error: ${alert.trim()}`);

      await page.screenshot({ path: shot, timeout: 15_000 });
      step(`screenshot ${shot}`);
    } catch (err) {
      await page.screenshot({ path: failShot, timeout: 15_000 }).catch(() => {});
      throw err;
    }
  } finally {
    clearInterval(sampler);
    const stopping = Date.now();
    // Both at once: each waits for its process group to be gone (and reaped).
    await Promise.allSettled([workbench?.close(), server?.stop()]);
    removeTempDir(folder);
    writeFileSync(consoleLog, consoleLines.join('\n') + '\n');
    step(`stopped Chromium and code-server in ${Date.now() - stopping} ms; peak memory (PSS) ${peakMiB} MiB`);
  }
}

main().then(
  () => {
    console.log(`ui-smoke: PASS in ${seconds()} s`);
    process.exit(0);
  },
  (err) => {
    console.error(`ui-smoke: FAIL after ${seconds()} s — ${err instanceof SmokeFailure ? err.message : err.stack}`);
    console.error(`  see ${join('test-artifacts', 'ui-smoke-failure.png')}, ui-smoke-code-server.log, ui-smoke-console.log`);
    process.exit(1);
  },
);
