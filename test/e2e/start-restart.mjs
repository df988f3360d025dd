// `npm start` as a user meets it, twice: with no API key it opens on the bundled demo model
// and the panel says how to switch; a conversation started there is still in the tree after
// `npm start` is stopped (Ctrl+C) and started again.
// Usage: node test/e2e/start-restart.mjs   (after npm run build and npm run setup:e2e)
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openWorkbench, removeTempDir, tempDir, withTimeout } from '../../scripts/e2e/code-server.mjs';
import { artifactsDir, repoRoot } from '../../scripts/e2e/paths.mjs';
import { SEL, say, sleep, visible } from './lib/flow.mjs';
import { watchArborFrames } from './lib/frames.mjs';

const outDir = join(artifactsDir, 'start-restart');
mkdirSync(outDir, { recursive: true });
const home = tempDir('arbor-start-home-');
const env = { ...process.env, ARBOR_START_HOME: home };
for (const k of ['ARBOR_API_KEY', 'DEEPSEEK_API_KEY', 'OPENAI_API_KEY', 'ARBOR_DEMO_BASE_URL']) delete env[k];

/** Runs `npm start`'s script until it prints its URL; returns the process and the URL. */
async function start() {
  const child = spawn(process.execPath, [join(repoRoot, 'scripts', 'start.mjs'), '--skip-build'], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise((r) => child.on('exit', (code, signal) => r({ code, signal })));
  const url = await withTimeout(
    (async () => {
      for (;;) {
        const m = /Open this URL[^\n]*\n\n\s+(\S+)/.exec(out);
        if (m) return m[1];
        if (child.exitCode !== null) throw new Error(`npm start exited early (${child.exitCode}):\n${out.slice(-2000)}`);
        await sleep(200);
      }
    })(),
    180_000,
    'npm start to print its URL',
  );
  return { child, url, exited, output: () => out };
}

async function stop(s) {
  s.child.kill('SIGINT');
  const r = await withTimeout(s.exited, 30_000, 'npm start to stop on Ctrl+C');
  // 130 is the conventional exit of a process stopped by Ctrl+C (the e2e exit hook stops code-server first).
  if (r.code !== 0 && r.code !== 130) throw new Error(`npm start exited ${JSON.stringify(r)} on Ctrl+C:\n${s.output().slice(-1500)}`);
  let left = [];
  try {
    left = execFileSync('pgrep', ['-f', home], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  } catch {
    left = [];
  }
  if (left.length) throw new Error(`processes left after npm start stopped: ${left.join(' ')}`);
}

async function panelOf(url, shot, fn) {
  const u = new URL(url);
  const wb = await openWorkbench(u.origin, { folder: join(home, 'sample-workspace'), devExtensionPath: repoRoot });
  const frames = watchArborFrames(wb.page);
  try {
    const page = wb.page;
    await page.locator(SEL.workbench).waitFor({ state: 'visible', timeout: 60_000 });
    const icon = await visible(page.locator(SEL.activityIcon), 'the Arbor activity-bar icon', 30_000);
    if (!(await page.locator(SEL.activityIconChecked).isVisible())) await icon.click({ timeout: 10_000 });
    const panel = page.frameLocator(SEL.panelFrame).frameLocator('#active-frame');
    await visible(panel.locator('.composer vscode-textarea textarea'), 'the chat input', 45_000);
    await fn(panel);
    await page.screenshot({ path: join(outDir, shot), timeout: 15_000 });
  } finally {
    frames.stop();
    await wb.close();
  }
}

const t0 = Date.now();
let s;
try {
  say('start-restart: first npm start (no API key)');
  s = await start();
  const port1 = new URL(s.url).port;
  await panelOf(s.url, '01-first-start-demo.png', async (panel) => {
    const notice = await visible(panel.locator('.notice.demo'), 'the demo-model notice', 20_000);
    const text = (await notice.textContent({ timeout: 5_000 })) ?? '';
    if (!/Set API Key/.test(text)) throw new Error(`the demo notice does not offer Set API Key: ${JSON.stringify(text)}`);
    const input = panel.locator('.composer vscode-textarea textarea');
    await input.fill('remember me across restarts', { timeout: 10_000 });
    await input.press('Enter', { timeout: 10_000 });
    await visible(panel.locator('article.msg.assistant', { hasText: 'Arbor demo' }), "the demo model's answer", 30_000);
    await visible(panel.locator('[role="treeitem"][aria-label^="remember me across restarts,"]'), 'the conversation in the tree', 10_000);
  });
  await sleep(1_000); // the store's journal is fsync'd per append; give the webview state a moment too
  await stop(s);
  // The user edits settings.json between starts, JSONC as the README's examples are (issue 21.1):
  // the next start must keep every key and comment of theirs.
  const settingsFile = join(home, 'user-data', 'User', 'settings.json');
  const mine = readFileSync(settingsFile, 'utf8').replace(
    /^\{/,
    `{
  // my own settings, with a comment as the README's jsonc examples have
  "arbor.subagents.childApproval": "escalate", /* kept */
  "arbor.remote.acp": [{ "name": "mine", "command": "my-acp-agent", "args": ["--acp"] },],`,
  );
  writeFileSync(settingsFile, mine);
  say('start-restart: stopped; starting again');
  s = await start();
  const after = readFileSync(settingsFile, 'utf8');
  for (const kept of ['// my own settings, with a comment', '"arbor.subagents.childApproval": "escalate"', '/* kept */', '"my-acp-agent"', '"--acp"'])
    if (!after.includes(kept)) throw new Error(`the second npm start dropped ${kept} from settings.json:\n${after}`);
  const port2 = new URL(s.url).port;
  if (port1 !== port2) throw new Error(`the second npm start used port ${port2}, the first ${port1}: the workbench would not find the workspace's storage`);
  await panelOf(s.url, '02-second-start-tree-kept.png', async (panel) => {
    await visible(panel.locator('[role="treeitem"][aria-label^="remember me across restarts,"]'), 'the conversation from the first run in the tree', 30_000);
  });
  await stop(s);
  s = undefined;
  console.log(`start-restart: PASS in ${((Date.now() - t0) / 1000).toFixed(1)} s (same port ${port1}; the tree came back)`);
  removeTempDir(home);
  process.exit(0);
} catch (err) {
  console.error(`start-restart: FAIL — ${err.message}`);
  if (s) {
    console.error(s.output().slice(-3000));
    try {
      process.kill(-s.child.pid, 'SIGTERM');
    } catch {
      // gone
    }
    await sleep(2_000);
  }
  process.exit(1);
}
