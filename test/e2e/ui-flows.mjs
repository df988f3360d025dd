// UI end-to-end flows on the real VS Code workbench (code-server) in headless Chromium.
// The built extension loads in development mode (payload URL) on a temp copy of
// media/sample-workspace, talking to the scripted demo model (test/support/demo-script.ts,
// served in this process by test/support/model-server.ts). Every step happens in the UI:
//
//   01 open the Arbor panel from the activity bar; the chat input is there
//   02 type a message and send it; the assistant's answer streams into the chat
//   03 "survey the workspace": a 'surveyor' child appears under the root and settles; its
//      report and the settlement notice appear in the root's chat
//   04 right-click the child → "Open Transcript": an editor tab shows the child's messages
//   05 select the child, send it a follow-up: it is resumed from its log and answers
//   06 "start a long task": the 'long-task' child runs; right-click → "Interrupt Agent"
//   07 right-click a message of the root → "Fork Conversation": a fork node appears under
//      the root, selected; a message sent to it is answered
//   08 reload the window: the tree (every node above) and the transcript tab come back
//
// Usage: npm run test:ui   (after npm run setup:e2e and npm run build)
// Artifacts: test-artifacts/ui-flows/NN-step.png, and on failure failure-NN-step.png;
// code-server.log, console.log and the extension's Arbor log are always kept.
// ARBOR_E2E_HEADED=1 shows the browser (needs a display).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { groupMemoryMiB, openWorkbench, removeTempDir, startCodeServer, tempDir, withTimeout } from '../../scripts/e2e/code-server.mjs';
import { artifactsDir, missingTools, repoRoot } from '../../scripts/e2e/paths.mjs';

const EXTENSION_ID = 'arbor-dev.arbor';
const outDir = join(artifactsDir, 'ui-flows');
const RELEASE_DELAY_MS = 300;
/** The whole run; each step has its own, smaller budget. */
const RUN_TIMEOUT_MS = Number(process.env.ARBOR_UI_FLOWS_TIMEOUT_MS ?? 240_000);

const SEL = {
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
};

const started = Date.now();
const secs = (ms = Date.now() - started) => (ms / 1000).toFixed(1);
const say = (msg) => console.log(`[ui-flows +${secs()} s] ${msg}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

class FlowFailure extends Error {}

/** What to save if the whole-run guard fires mid-step (set by main once there is a page). */
let saveEvidence = async () => {};

/** Polls `probe` until it returns a truthy value; the error names `what` and the last value seen. */
async function until(what, timeoutMs, probe) {
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
async function visible(locator, what, timeoutMs) {
  try {
    await locator.waitFor({ state: 'visible', timeout: timeoutMs });
  } catch (err) {
    throw new Error(`${what} did not appear within ${timeoutMs} ms (${err.message.split('\n')[0]})`);
  }
  return locator;
}

function copyArborLogs(userDataDir) {
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

async function main() {
  const missing = missingTools();
  if (missing.length) throw new FlowFailure(`E2E tools missing (${missing.join(', ')}). Run: npm run setup:e2e`);
  const needed = ['dist/extension.js', 'dist/host.js', 'dist/webview/index.js', 'out/test/support/model-server.js', 'out/test/support/demo-script.js'];
  for (const built of needed) {
    if (!existsSync(join(repoRoot, built))) throw new FlowFailure(`${built} is missing. Run: npm run build`);
  }
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const serverLog = join(outDir, 'code-server.log');
  const consoleLog = join(outDir, 'console.log');

  const require = createRequire(import.meta.url);
  const { ModelServer } = require(join(repoRoot, 'out', 'test', 'support', 'model-server.js'));
  const { demoReply } = require(join(repoRoot, 'out', 'test', 'support', 'demo-script.js'));

  const folder = tempDir('arbor-ui-flows-');
  cpSync(join(repoRoot, 'media', 'sample-workspace'), folder, { recursive: true });

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

  /** One step: bounded, logged, and photographed (NN-name.png). */
  async function step(name, timeoutMs, fn) {
    const n = String(++stepNo).padStart(2, '0');
    current = `${n}-${name}`;
    const t0 = Date.now();
    say(`step ${n} ${name}…`);
    try {
      await withTimeout(fn(), timeoutMs, `step ${n} ${name}`);
    } catch (err) {
      throw new FlowFailure(`step ${n} "${name}" failed: ${err.message}`);
    }
    await page.screenshot({ path: join(outDir, `${current}.png`), timeout: 15_000 });
    stepTimes.push(`${current} ${secs(Date.now() - t0)} s`);
    say(`step ${n} ${name} passed in ${secs(Date.now() - t0)} s`);
  }

  try {
    model = await ModelServer.start();
    model.setFallback((body) => demoReply(body));
    say(`demo model (scripted) at ${model.baseURL}`);

    server = await startCodeServer({
      folder,
      smokeDriver: true,
      logFile: serverLog,
      settings: {
        'arbor.model.baseUrl': model.baseURL,
        'arbor.model.name': 'arbor-demo',
        'arbor.subagents.releaseDelayMs': RELEASE_DELAY_MS,
        'workbench.editor.enablePreview': false,
      },
    });
    say(`code-server ${server.url} healthy`);
    workbench = await openWorkbench(server.url, {
      folder,
      devExtensionPath: repoRoot,
      headless: process.env.ARBOR_E2E_HEADED !== '1',
      onConsole: (msg) => consoleLines.push(`[${msg.type()}] ${msg.text()}`),
    });
    page = workbench.page;
    saveEvidence = async () => {
      const shot = join(outDir, `failure-${current}.png`);
      await page.screenshot({ path: shot, timeout: 5_000 }).catch(() => {});
      writeFileSync(consoleLog, consoleLines.join('\n') + '\n');
      console.error(`[ui-flows] failure screenshot: ${relative(repoRoot, shot)} (during step ${current})`);
    };
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
      say(`  context menu: ${items.map((s) => s.trim()).filter(Boolean).join(' | ')}`);
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

    /**
     * The chat follows the newest message: `locator` must come into the transcript's
     * scrolled viewport (not just exist further down).
     */
    async function inView(locator, what, timeoutMs = 5_000) {
      await visible(locator, what, timeoutMs);
      let where = '';
      try {
        await until(`${what} to be scrolled into the chat's view`, timeoutMs, async () => {
          const v = await locator.evaluate((el) => {
            const s = el.closest('.scroller');
            const r = el.getBoundingClientRect();
            const q = s.getBoundingClientRect();
            return r.top < q.bottom && r.bottom > q.top ? true : `scrollTop ${s.scrollTop}, scrollHeight ${s.scrollHeight}, clientHeight ${s.clientHeight}, element at ${Math.round(r.top - q.top)}px`;
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
      await until(`the chat header to show "${name}"`, 10_000, async () => (await chat.locator('.head .name').first().textContent({ timeout: 2_000 }))?.trim() === name);
    }

    await page.locator(SEL.workbench).waitFor({ state: 'visible', timeout: 60_000 });
    say(`workbench visible (title: ${JSON.stringify(await page.title())})`);

    const ROOT = 'hello Arbor';
    let rootId;
    let surveyorId;
    let forkId;

    // ── 1 ────────────────────────────────────────────────────────────────────
    await step('open-panel', 60_000, async () => {
      const icon = await visible(page.locator(SEL.activityIcon), 'the Arbor activity-bar icon (is the extension loading?)', 30_000);
      await icon.click({ timeout: 10_000 });
      await visible(input, 'the chat input in the Arbor panel', 45_000);
      await visible(panel.locator('[aria-label="Sessions"]'), 'the Sessions (tree) pane', 5_000);
      await until('the panel to be ready (snapshot received)', 15_000, async () =>
        (await panel.locator('.tree-body').textContent({ timeout: 2_000 }))?.includes('No conversations yet'),
      );
      const alerts = await panel.locator('[role="alert"]').allTextContents();
      if (alerts.length) throw new Error(`the panel shows an error: ${alerts.join(' / ')}`);
    });

    // ── 2 ────────────────────────────────────────────────────────────────────
    await step('chat-streamed-answer', 30_000, async () => {
      // Record what the live (streaming) bubble shows as it grows, to see the stream itself.
      await panel.locator('body').evaluate(() => {
        const w = /** @type {any} */ (window);
        w.__arborLive = [];
        w.__arborMo?.disconnect();
        w.__arborMo = new MutationObserver(() => {
          const live = document.querySelector('article.live');
          if (live) w.__arborLive.push(live.textContent?.length ?? 0);
        });
        w.__arborMo.observe(document.body, { subtree: true, childList: true, characterData: true });
      });
      await send(ROOT, { button: true });
      await visible(chat.locator('article.msg.user', { hasText: ROOT }), 'the sent message in the chat', 10_000);
      await inView(chat.locator('article.msg.assistant', { hasText: 'Arbor demo (scripted model)' }), "the assistant's answer", 20_000);
      const sizes = await panel.locator('body').evaluate(() => {
        const w = /** @type {any} */ (window);
        w.__arborMo.disconnect();
        return w.__arborLive;
      });
      const distinct = new Set(sizes.filter((n) => n > 0));
      say(`  streaming bubble seen at ${distinct.size} sizes (${[...distinct].slice(0, 8).join(', ')}…)`);
      if (distinct.size < 2) throw new Error(`the answer did not stream in (the live bubble was seen at ${distinct.size} size(s))`);
      await visible(rowWith(ROOT, 'idle'), `the root node "${ROOT}" in the tree`, 10_000);
      rootId = await row(ROOT).getAttribute('data-row-id', { timeout: 5_000 });
      if (!rootId) throw new Error('the root row has no data-row-id');
    });

    // ── 3 ────────────────────────────────────────────────────────────────────
    await step('child-appears-and-settles', 40_000, async () => {
      await send('survey the workspace');
      await visible(row('surveyor'), "the 'surveyor' node in the tree", 15_000);
      const level = await row('surveyor').getAttribute('aria-level', { timeout: 5_000 });
      if (level !== '2') throw new Error(`'surveyor' is at tree level ${level}, expected 2 (under the root)`);
      surveyorId = await row('surveyor').getAttribute('data-row-id', { timeout: 5_000 });
      // Its tooltip's second line is "ORIGIN · depth N · …"; a child's id extends its parent's.
      const origin = ((await row('surveyor').getAttribute('title', { timeout: 5_000 })) ?? '').split('\n')[1] ?? '';
      if (!surveyorId?.startsWith(`${rootId}.`) || !origin.startsWith('subagent · depth 1')) {
        throw new Error(`'surveyor' (${surveyorId}, "${origin}") is not a subagent of the root (${rootId})`);
      }
      await visible(rowWith('surveyor', 'settled'), "'surveyor' with status settled", 25_000);
      await visible(chat.locator('article.msg.report', { hasText: 'Listed the files' }), "the surveyor's report in the root's chat", 10_000);
      await visible(chat.locator('article.msg.settled', { hasText: 'surveyor' }), 'the settlement notice in the root chat', 10_000);
      await inView(chat.locator('article.msg.settled', { hasText: 'surveyor' }), 'the settlement notice');
      const notice = (await chat.locator('article.msg.settled').first().textContent({ timeout: 5_000 })) ?? '';
      if (!/settled/.test(notice)) throw new Error(`the settlement notice says ${JSON.stringify(notice)}`);
    });

    // ── 4 ────────────────────────────────────────────────────────────────────
    await step('open-transcript-tab', 30_000, async () => {
      await contextMenu(row('surveyor'), 'Open Transcript');
      await visible(page.locator(SEL.editorTab, { hasText: `Arbor: ${surveyorId}` }), `the editor tab "Arbor: ${surveyorId}"`, 15_000);
      await visible(tab.locator('.transcript-view'), 'the transcript webview in the tab', 20_000);
      await visible(tab.locator('article.msg.assistant', { hasText: 'Survey done' }), "the child's final answer in the tab", 15_000);
      await visible(tab.locator('article.msg', { hasText: 'SURVEY: list the workspace files' }), "the child's task in the tab", 5_000);
      const head = (await tab.locator('.head .name').textContent({ timeout: 5_000 }))?.trim();
      if (head !== 'surveyor') throw new Error(`the tab's header names ${JSON.stringify(head)}, expected "surveyor"`);
    });

    // ── 5 ────────────────────────────────────────────────────────────────────
    await step('follow-up-cold-resume', 40_000, async () => {
      await selectRow('surveyor');
      await visible(chat.locator('article.msg.assistant', { hasText: 'Survey done' }), "the surveyor's transcript in the panel chat", 10_000);
      await visible(rowWith('surveyor', 'settled'), "'surveyor' released (settled) before the follow-up", 10_000);
      await send('please also check the tests');
      await inView(chat.locator('article.msg.assistant', { hasText: 'Follow-up received' }), "the child's answer to the follow-up", 25_000);
      // The open transcript tab shows the same session and follows it live.
      await visible(tab.locator('article.msg.assistant', { hasText: 'Follow-up received' }), 'the follow-up answer in the transcript tab', 10_000);
      await visible(rowWith('surveyor', 'settled'), "'surveyor' settled again", 15_000);
    });

    // ── 6 ────────────────────────────────────────────────────────────────────
    await step('interrupt-from-tree', 40_000, async () => {
      await selectRow(ROOT);
      await send('start a long task');
      await visible(rowWith('long-task', 'running'), "'long-task' running in the tree", 20_000);
      // Let it stream a little, so an interrupt cuts real work.
      await sleep(800);
      await contextMenu(row('long-task'), 'Interrupt Agent');
      await visible(rowWith('long-task', 'interrupted'), "'long-task' with status interrupted", 15_000);
      await visible(chat.locator('article.msg.settled', { hasText: 'long-task' }), "the root's notice that long-task settled", 10_000);
    });

    // ── 7 ────────────────────────────────────────────────────────────────────
    await step('fork-message', 40_000, async () => {
      const before = new Set(await rowIds());
      // Fork the root from its first answer (the demo's help).
      const message = chat.locator('article.msg.assistant', { hasText: 'Arbor demo (scripted model)' }).first();
      await contextMenu(message, 'Fork Conversation');
      forkId = await until('a new node in the tree', 15_000, async () => (await rowIds()).find((id) => !before.has(id)));
      const fork = panel.locator(`[role="treeitem"][data-row-id="${forkId}"]`);
      await visible(fork.locator('.origin.fork'), 'the new node with the fork icon', 5_000);
      const title = (await fork.getAttribute('title', { timeout: 5_000 })) ?? '';
      if (!/^fork of /m.test(title.split('\n')[1] ?? '')) throw new Error(`the new node is not a fork: ${JSON.stringify(title)}`);
      if ((await fork.getAttribute('aria-level')) !== '2') throw new Error(`the fork is not under its parent (level ${await fork.getAttribute('aria-level')})`);
      if (!title.includes(`fork of ${ROOT}`)) throw new Error(`the fork's parent is not the root: ${JSON.stringify(title)}`);
      await until('the fork to be selected', 10_000, async () => (await fork.getAttribute('aria-selected', { timeout: 2_000 })) === 'true');
      await until('the chat to show the fork (its header says "fork of")', 10_000, async () => (await chat.locator('.head .of').textContent({ timeout: 2_000 }))?.includes('fork of'));
      const answers = chat.locator('article.msg.assistant', { hasText: 'Arbor demo (scripted model)' });
      const n0 = await until("the fork's copied history", 10_000, async () => answers.count());
      await send('what can you do here?');
      await visible(chat.locator('article.msg.user', { hasText: 'what can you do here?' }), 'the message sent to the fork', 10_000);
      await until("the fork's answer", 20_000, async () => (await answers.count()) > n0);
      const last = chat.locator('article.msg').last();
      if (!((await last.textContent({ timeout: 5_000 })) ?? '').includes('Arbor demo')) throw new Error("the fork's chat does not end with its answer");
      await inView(last, "the fork's answer");
    });

    // ── 8 ────────────────────────────────────────────────────────────────────
    const expectRows = [
      [ROOT, 'root'],
      ['surveyor', 'settled'],
      ['long-task', 'interrupted'],
    ];
    await step('reload-restores', 90_000, async () => {
      // Let the views save their state (the webview coalesces writes for 150 ms).
      await sleep(500);
      await page.reload({ waitUntil: 'domcontentloaded', timeout: 60_000 });
      await page.locator(SEL.workbench).waitFor({ state: 'visible', timeout: 60_000 });
      // The Arbor container stays open across a reload; open it only if it did not.
      if (!(await page.locator(SEL.activityIconChecked).isVisible())) {
        await sleep(3_000);
        if (!(await page.locator(SEL.activityIconChecked).isVisible())) {
          say('  the Arbor view was not open after the reload; clicking its icon');
          await page.locator(SEL.activityIcon).click({ timeout: 30_000 });
        }
      }
      await visible(input, 'the chat input after the reload', 45_000);
      for (const [name, status] of expectRows) {
        await visible(status === 'root' ? row(name) : rowWith(name, status), `the node "${name}"${status === 'root' ? '' : ` (${status})`} after the reload`, 20_000);
      }
      await visible(panel.locator(`[role="treeitem"][data-row-id="${forkId}"] .origin.fork`), `the fork node ${forkId} after the reload`, 10_000);
      await visible(page.locator(SEL.editorTab, { hasText: `Arbor: ${surveyorId}` }), 'the transcript tab after the reload', 20_000);
      await visible(tab.locator('article.msg.assistant', { hasText: 'Survey done' }), "the restored tab's content", 30_000);
      await visible(tab.locator('article.msg.assistant', { hasText: 'Follow-up received' }), "the restored tab's follow-up answer", 10_000);
    });

    say(`model requests served: ${model.requests.length}`);
  } catch (err) {
    if (page) {
      const shot = join(outDir, `failure-${current}.png`);
      await page.screenshot({ path: shot, timeout: 15_000 }).catch(() => {});
      console.error(`[ui-flows] failure screenshot: ${relative(repoRoot, shot)}`);
    }
    if (server) console.error(`[ui-flows] code-server output (last lines):\n${server.output().split('\n').slice(-25).join('\n')}`);
    throw err;
  } finally {
    clearInterval(sampler);
    const stopping = Date.now();
    let logs = [];
    try {
      if (server) logs = copyArborLogs(server.userDataDir);
    } catch (err) {
      say(`could not copy the extension logs: ${err.message}`);
    }
    const serverPgid = server?.pid;
    const browserPgid = workbench?.browserPgid;
    // Both at once: each waits for its process group to be gone (and reaped).
    await Promise.allSettled([workbench?.close(), server?.stop(), model?.stop()]);
    removeTempDir(folder);
    writeFileSync(consoleLog, consoleLines.join('\n') + '\n');
    say(`stopped Chromium and code-server in ${Date.now() - stopping} ms; peak memory (PSS) ${peakMiB} MiB`);
    if (logs.length) say(`extension logs: ${logs.join(', ')}`);
    if (stepTimes.length) say(`step times: ${stepTimes.join('; ')}`);
    // Nothing may be left running: no member of either process group, nothing using their dirs.
    const left = [];
    const pgrep = (args) => {
      try {
        return execFileSync('pgrep', args, { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
      } catch {
        return []; // exit 1: no match (or no pgrep)
      }
    };
    if (serverPgid) left.push(...pgrep(['-g', String(serverPgid)]));
    if (browserPgid) left.push(...pgrep(['-g', String(browserPgid)]));
    if (server) left.push(...pgrep(['-f', server.userDataDir]));
    if (browserProfile) left.push(...pgrep(['-f', browserProfile]));
    if (left.length) {
      process.exitCode = 1;
      console.error(`[ui-flows] FAIL: processes left running after the run: ${[...new Set(left)].join(' ')}`);
    } else {
      say('no code-server or Chromium process left (pgrep)');
    }
  }
}

let runTimer;
const runTimeout = new Promise((_, reject) => {
  runTimer = setTimeout(() => reject(Object.assign(new FlowFailure(`the whole run took longer than ${RUN_TIMEOUT_MS} ms`), { runTimeout: true })), RUN_TIMEOUT_MS);
});
Promise.race([main(), runTimeout]).then(
  () => {
    clearTimeout(runTimer);
    if (process.exitCode) {
      console.error(`ui-flows: FAIL after ${secs()} s`);
      process.exit(1);
    }
    console.log(`ui-flows: PASS in ${secs()} s (screenshots in ${relative(repoRoot, outDir)}/)`);
    process.exit(0);
  },
  async (err) => {
    clearTimeout(runTimer);
    // The guard fired while main() still runs: save what we can; the exit hook of
    // scripts/e2e/code-server.mjs then kills code-server and Chromium and removes temp dirs.
    if (err.runTimeout) await withTimeout(saveEvidence(), 10_000, 'saving evidence').catch(() => {});
    console.error(`ui-flows: FAIL after ${secs()} s — ${err instanceof FlowFailure ? err.message : err.stack}`);
    console.error(`  see ${relative(repoRoot, outDir)}/ (failure-*.png, code-server.log, console.log, logs/)`);
    process.exit(1);
  },
);
