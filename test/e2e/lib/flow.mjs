// One UI flow on the real VS Code workbench (code-server) in headless Chromium, with the
// helpers every flow uses. A flow file (test/e2e/flows/*.mjs) exports
//   export const flow = { name, settings?, model?: (model) => void, timeoutMs?, run: async (ctx) => {...} }
// and each flow gets its own code-server, profile, workspace copy and scripted model server,
// so flows never depend on one another and any one can run alone:
//   node test/e2e/ui-flows.mjs [flow-name …]
// Every step is bounded, logged and photographed to test-artifacts/ui-flows/<flow>/NN-step.png.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { groupMemoryMiB, openWorkbench, removeTempDir, startCodeServer, tempDir, withTimeout } from '../../../scripts/e2e/code-server.mjs';
import { artifactsDir, repoRoot } from '../../../scripts/e2e/paths.mjs';

export const EXTENSION_ID = 'arbor-dev.arbor';
export const RELEASE_DELAY_MS = 300;

export const SEL = {
  workbench: '.monaco-workbench .part.activitybar',
  activityIcon: '.activitybar a.action-label[aria-label^="Arbor"]',
  activityIconChecked: '.activitybar .action-item.checked a.action-label[aria-label^="Arbor"]',
  // Webviews are two frames deep: VS Code's host iframe, then #active-frame with our page.
  // The side panel is a webview *view*; a transcript tab is a webview *panel* (editor).
  panelFrame: `iframe.webview.ready[src*="extensionId=${EXTENSION_ID}"][src*="purpose=webviewView"]`,
  tabFrame: `iframe.webview.ready[src*="extensionId=${EXTENSION_ID}"]:not([src*="purpose=webviewView"])`,
  // VS Code's context menu is drawn in the main page (inside an open shadow root).
  menuItem: '.context-view .monaco-menu .action-item .action-label',
  editorTab: '.part.editor .tabs-container .tab',
  quickInput: '.quick-input-widget input',
  quickRow: '.quick-input-list .monaco-list-row',
};

const started = Date.now();
export const secs = (ms = Date.now() - started) => (ms / 1000).toFixed(1);
export const say = (msg) => console.log(`[ui-flows +${secs()} s] ${msg}`);
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export class FlowFailure extends Error {}

/** Polls `probe` until it returns a truthy value; the error names `what` and the last value seen. */
export async function until(what, timeoutMs, probe) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await probe();
      if (last) return last;
    } catch (err) {
      last = `error: ${err.message.split('\n')[0]}`;
    }
    if (Date.now() > deadline) throw new Error(`${what} (not within ${timeoutMs} ms; last seen: ${JSON.stringify(last)?.slice(0, 300)})`);
    await sleep(200);
  }
}

/** Waits for a locator to be visible, with a message that says what was expected. */
export async function visible(locator, what, timeoutMs) {
  try {
    await locator.waitFor({ state: 'visible', timeout: timeoutMs });
  } catch (err) {
    throw new Error(`${what} did not appear within ${timeoutMs} ms (${err.message.split('\n')[0]})`);
  }
  return locator;
}

function copyArborLogs(userDataDir, outDir) {
  // The extension's LogOutputChannel lands under the user-data dir's logs, in a file named after it.
  const logs = join(userDataDir, 'logs');
  if (!existsSync(logs)) return [];
  const found = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/Arbor\.log$/.test(name) || /^remoteexthost\.log$|^exthost\.log$/.test(name)) found.push(p);
    }
  };
  walk(logs);
  const copied = [];
  for (const p of found) {
    const target = join(outDir, 'logs', relative(logs, p));
    mkdirSync(join(target, '..'), { recursive: true });
    cpSync(p, target);
    copied.push(relative(repoRoot, target));
  }
  return copied;
}

const pgrep = (args) => {
  try {
    return execFileSync('pgrep', args, { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  } catch {
    return []; // exit 1: no match (or no pgrep)
  }
};

/**
 * Runs one flow: model server, code-server, Chromium, the workbench with Arbor in development
 * mode; then `flow.run(ctx)`; then stops everything and checks nothing is left running.
 * Throws FlowFailure naming the step that failed (a screenshot is kept).
 */
export async function runFlow(flow) {
  const outDir = join(artifactsDir, 'ui-flows', flow.name);
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const serverLog = join(outDir, 'code-server.log');
  const consoleLog = join(outDir, 'console.log');

  const require = createRequire(import.meta.url);
  const { ModelServer } = require(join(repoRoot, 'out', 'test', 'support', 'model-server.js'));
  const { demoReply, DEMO_PROMPTS } = require(join(repoRoot, 'out', 'test', 'support', 'demo-script.js'));

  const folder = flow.folder ?? tempDir('arbor-ui-flows-');
  if (!flow.folder) cpSync(join(repoRoot, 'media', 'sample-workspace'), folder, { recursive: true });

  const consoleLines = [];
  let model;
  let server;
  let workbench;
  let page;
  let peakMiB = 0;
  let sampler;
  let browserProfile;
  let current = 'setup';
  let stepNo = 0;
  const stepTimes = [];
  const t0run = Date.now();

  try {
    model = await ModelServer.start();
    model.setFallback((body) => demoReply(body));
    flow.model?.(model);
    say(`[${flow.name}] demo model (scripted) at ${model.baseURL}`);
    const settings = {
      'arbor.model.baseUrl': model.baseURL,
      'arbor.model.name': 'arbor-demo',
      'arbor.subagents.releaseDelayMs': RELEASE_DELAY_MS,
      'arbor.chat.examplePrompts': [...DEMO_PROMPTS],
      'workbench.editor.enablePreview': false,
      ...(typeof flow.settings === 'function' ? flow.settings(model) : (flow.settings ?? {})),
    };
    for (const [k, v] of Object.entries(settings)) if (v === undefined) delete settings[k];
    server = await startCodeServer({ folder, smokeDriver: true, logFile: serverLog, settings, ...(flow.userDataDir ? { userDataDir: flow.userDataDir } : {}) });
    say(`[${flow.name}] code-server ${server.url} healthy`);
    workbench = await openWorkbench(server.url, {
      folder,
      devExtensionPath: repoRoot,
      headless: process.env.ARBOR_E2E_HEADED !== '1',
      onConsole: (msg) => consoleLines.push(`[${msg.type()}] ${msg.text()}`),
      ...(flow.viewport ? { viewport: flow.viewport } : {}),
    });
    page = workbench.page;
    page.on('pageerror', (err) => consoleLines.push(`[pageerror] ${err.message}`));
    if (workbench.browserPgid) {
      try {
        browserProfile = readFileSync(`/proc/${workbench.browserPgid}/cmdline`, 'utf8')
          .split('\0')
          .find((a) => a.startsWith('--user-data-dir='))
          ?.slice('--user-data-dir='.length);
      } catch {
        // not Linux, or gone
      }
    }
    sampler = setInterval(() => {
      const total = groupMemoryMiB(server.pid) + (workbench.browserPgid ? groupMemoryMiB(workbench.browserPgid) : 0);
      peakMiB = Math.max(peakMiB, total);
    }, 500);

    const ctx = makeContext({ page, model, server, folder, outDir });
    ctx.step = async (name, timeoutMs, fn) => {
      const n = String(++stepNo).padStart(2, '0');
      current = `${n}-${name}`;
      const t0 = Date.now();
      say(`[${flow.name}] step ${n} ${name}…`);
      try {
        await withTimeout(fn(), timeoutMs, `step ${n} ${name}`);
      } catch (err) {
        throw new FlowFailure(`[${flow.name}] step ${n} "${name}" failed: ${err.message}`);
      }
      await page.screenshot({ path: join(outDir, `${current}.png`), timeout: 15_000 });
      stepTimes.push(`${current} ${secs(Date.now() - t0)} s`);
      say(`[${flow.name}] step ${n} ${name} passed in ${secs(Date.now() - t0)} s`);
    };
    await page.locator(SEL.workbench).waitFor({ state: 'visible', timeout: 60_000 });
    say(`[${flow.name}] workbench visible (title: ${JSON.stringify(await page.title())})`);
    await flow.run(ctx);
    say(`[${flow.name}] model requests served: ${model.requests.length}`);
  } catch (err) {
    if (page) {
      const shot = join(outDir, `failure-${current}.png`);
      await page.screenshot({ path: shot, timeout: 15_000 }).catch(() => {});
      console.error(`[ui-flows] failure screenshot: ${relative(repoRoot, shot)}`);
    }
    if (server) console.error(`[ui-flows] code-server output (last lines):\n${server.output().split('\n').slice(-25).join('\n')}`);
    throw err instanceof FlowFailure ? err : new FlowFailure(`[${flow.name}] ${err.stack ?? err.message}`);
  } finally {
    clearInterval(sampler);
    const stopping = Date.now();
    let logs = [];
    try {
      if (server) logs = copyArborLogs(server.userDataDir, outDir);
    } catch (err) {
      say(`could not copy the extension logs: ${err.message}`);
    }
    const serverPgid = server?.pid;
    const browserPgid = workbench?.browserPgid;
    // Both at once: each waits for its process group to be gone (and reaped).
    await Promise.allSettled([workbench?.close(), server?.stop(), model?.stop()]);
    if (!flow.folder) removeTempDir(folder);
    writeFileSync(consoleLog, `${consoleLines.join('\n')}\n`);
    say(
      `[${flow.name}] stopped Chromium and code-server in ${Date.now() - stopping} ms; peak memory (PSS) ${peakMiB} MiB; flow took ${secs(Date.now() - t0run)} s`,
    );
    if (logs.length) say(`extension logs: ${logs.join(', ')}`);
    if (stepTimes.length) say(`step times: ${stepTimes.join('; ')}`);
    // Nothing may be left running: no member of either process group, nothing using their dirs.
    const left = [];
    if (serverPgid) left.push(...pgrep(['-g', String(serverPgid)]));
    if (browserPgid) left.push(...pgrep(['-g', String(browserPgid)]));
    if (server) left.push(...pgrep(['-f', server.userDataDir]));
    if (browserProfile) left.push(...pgrep(['-f', browserProfile]));
    // biome-ignore lint/correctness/noUnsafeFinally: a process left behind fails the flow even when a step failed first (both are reported)
    if (left.length) throw new FlowFailure(`[${flow.name}] processes left running after the run: ${[...new Set(left)].join(' ')}`);
  }
}

/**
 * Picks the quick-input row whose label is exactly `title` (a click, not Enter: the focused row
 * may be another match, such as "Browse Color Themes…" for "Color Theme").
 */
export async function pickRow(page, title) {
  const exact = new RegExp(`^\\s*${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`);
  const row = page
    .locator(SEL.quickRow)
    .filter({ has: page.locator('.label-name', { hasText: exact }) })
    .first();
  await visible(row, `the command "${title}" in the palette`, 10_000);
  await row.click({ timeout: 10_000 });
}

/**
 * Opens the command palette with `>text` typed in it. On a loaded machine F1 can land while
 * the workbench is still busy and the box is not ready for input: press it again (≤ 3 times).
 */
export async function typeInPalette(page, text) {
  const box = page.locator(SEL.quickInput);
  for (let attempt = 1; ; attempt++) {
    try {
      await page.keyboard.press('F1');
      await visible(box, 'the command palette', 10_000);
      await box.fill(text, { timeout: 5_000 });
      return box;
    } catch (err) {
      if (attempt === 3) throw err;
      await page.keyboard.press('Escape').catch(() => undefined);
      await sleep(500);
    }
  }
}

/** Locators and actions shared by the flows. */
function makeContext({ page, model, server, folder, outDir }) {
  const panel = page.frameLocator(SEL.panelFrame).frameLocator('#active-frame');
  const tab = page.frameLocator(SEL.tabFrame).frameLocator('#active-frame');
  const input = panel.locator('.composer vscode-textarea textarea');
  const chat = panel.locator('.chat-pane');
  const row = (name) => panel.locator(`[role="treeitem"][aria-label^="${name},"]`);
  const rowWith = (name, status) => panel.locator(`[role="treeitem"][aria-label^="${name}, ${status}"]`);
  const rowIds = () => panel.locator('[role="treeitem"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-row-id')));

  /** Types into the panel's chat input and sends with Enter (or the Send button). */
  async function send(text, { button = false } = {}) {
    await visible(input, 'the chat input', 10_000);
    await input.click({ timeout: 10_000 });
    await input.fill(text, { timeout: 10_000 });
    if (button) await panel.locator('.composer vscode-button', { hasText: 'Send' }).click({ timeout: 10_000 });
    else await input.press('Enter', { timeout: 10_000 });
    // Sent: the input was cleared by the webview.
    await until(`the input to be cleared after sending ${JSON.stringify(text)}`, 10_000, async () => (await input.inputValue({ timeout: 2_000 })) === '');
  }

  /** Right-clicks `target` (in a webview) and picks `label` from VS Code's context menu. */
  async function contextMenu(target, label) {
    await target.scrollIntoViewIfNeeded({ timeout: 10_000 });
    await target.click({ button: 'right', timeout: 10_000 });
    const item = page.locator(SEL.menuItem, { hasText: new RegExp(`^${label}$`) });
    await visible(item, `context-menu item "${label}"`, 10_000);
    const items = await page.locator(SEL.menuItem).allTextContents();
    say(
      `  context menu: ${items
        .map((s) => s.trim())
        .filter(Boolean)
        .join(' | ')}`,
    );
    // A click that lands while the menu is still settling can be swallowed (the menu stays
    // open, nothing runs). Point at the item first; click again only while the menu is
    // still open, so a command never runs twice.
    const menu = page.locator('.context-view .monaco-menu');
    for (let attempt = 1; ; attempt++) {
      await item.hover({ timeout: 5_000 });
      await sleep(150);
      await item.click({ timeout: 5_000 });
      try {
        await menu.waitFor({ state: 'hidden', timeout: 2_000 });
        break;
      } catch {
        if (attempt === 3) throw new Error(`the context menu stayed open after clicking "${label}" ${attempt} times`);
        say(`  the menu is still open after clicking "${label}"; clicking again`);
      }
    }
  }

  /** The chat follows the newest message: `locator` must come into the transcript's scrolled viewport. */
  async function inView(locator, what, timeoutMs = 5_000) {
    await visible(locator, what, timeoutMs);
    let where = '';
    try {
      await until(`${what} to be scrolled into the chat's view`, timeoutMs, async () => {
        const v = await locator.evaluate((el) => {
          const s = el.closest('.scroller');
          const r = el.getBoundingClientRect();
          const q = s.getBoundingClientRect();
          return r.top < q.bottom && r.bottom > q.top
            ? true
            : `scrollTop ${s.scrollTop}, scrollHeight ${s.scrollHeight}, clientHeight ${s.clientHeight}, element at ${Math.round(r.top - q.top)}px`;
        });
        if (v !== true) where = v;
        return v === true;
      });
    } catch (err) {
      throw new Error(`${err.message}: ${where}`);
    }
  }

  /** Clicks a tree row and waits until the chat shows that session. */
  async function selectRow(name) {
    await row(name).first().click({ timeout: 10_000 });
    await until(
      `the chat header to show "${name}"`,
      10_000,
      async () => (await chat.locator('.head .name').first().textContent({ timeout: 2_000 }))?.trim() === name,
    );
  }

  /** Opens the Arbor view from the activity bar and waits for its first snapshot. */
  async function openPanel() {
    const icon = await visible(page.locator(SEL.activityIcon), 'the Arbor activity-bar icon (is the extension loading?)', 30_000);
    // On a loaded machine the workbench can swallow the first click while it settles.
    for (let attempt = 1; !(await page.locator(SEL.activityIconChecked).isVisible()); attempt++) {
      try {
        await icon.click({ timeout: 15_000 });
        await page.locator(SEL.activityIconChecked).waitFor({ state: 'visible', timeout: 5_000 });
      } catch (err) {
        if (attempt === 3) throw new Error(`the Arbor view did not open after ${attempt} clicks on its icon (${err.message.split('\n')[0]})`);
      }
    }
    await visible(input, 'the chat input in the Arbor panel', 45_000);
    await visible(panel.locator('[aria-label="Sessions"]'), 'the Sessions (tree) pane', 10_000);
  }

  /** Runs a command from the palette (F1) by its full title, e.g. "Arbor: Set API Key". */
  async function command(title) {
    await typeInPalette(page, `>${title}`);
    await pickRow(page, title);
  }

  /**
   * Reloads the window and waits for the Arbor panel to be back. `trigger` reloads it the way
   * a user would (e.g. a notification's Reload Window button); without it the page is reloaded.
   */
  async function reload(trigger) {
    await sleep(500); // let the views save their state (the webview coalesces writes for 150 ms)
    if (trigger) await Promise.all([page.waitForEvent('domcontentloaded', { timeout: 60_000 }), trigger()]);
    else await page.reload({ waitUntil: 'domcontentloaded', timeout: 60_000 });
    await page.locator(SEL.workbench).waitFor({ state: 'visible', timeout: 60_000 });
    if (!(await page.locator(SEL.activityIconChecked).isVisible())) {
      await sleep(3_000);
      if (!(await page.locator(SEL.activityIconChecked).isVisible())) await page.locator(SEL.activityIcon).click({ timeout: 30_000 });
    }
    await visible(input, 'the chat input after the reload', 45_000);
  }

  return {
    page,
    model,
    server,
    folder,
    outDir,
    panel,
    tab,
    input,
    chat,
    row,
    rowWith,
    rowIds,
    send,
    contextMenu,
    inView,
    selectRow,
    openPanel,
    command,
    reload,
    until,
    visible,
    sleep,
    say,
    SEL,
  };
}
