// One UI flow on the real VS Code workbench (code-server) in headless Chromium, with the
// helpers every flow uses. A flow file (test/e2e/flows/*.mjs) exports
//   export const flow = { name, settings?, model?: (model) => void, timeoutMs?, folder?, userDataDir?,
//                         env?: extra environment of code-server and its extension host (e.g. HOME),
//                         prepare?: async ({ folder, model, say }) => void  (before code-server starts),
//                         run: async (ctx) => {...} }
// and each flow gets its own code-server, profile, workspace copy and scripted model server,
// so flows never depend on one another and any one can run alone:
//   node test/e2e/ui-flows.mjs [flow-name …]
// Every step is bounded, logged and photographed to test-artifacts/ui-flows/<flow>/NN-step.png.
// Budgets and waits follow what the workbench is doing (patience.mjs, decision 0050); the
// shared actions are in context.mjs, frames are found by content (frames.mjs), quick picks are
// driven by keyboard (quick-input.mjs).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { groupMemoryMiB, openWorkbench, removeTempDir, startCodeServer, tempDir } from '../../../scripts/e2e/code-server.mjs';
import { artifactsDir, repoRoot } from '../../../scripts/e2e/paths.mjs';
import { FlowFailure, RELEASE_DELAY_MS, SEL, say, secs } from './common.mjs';
import { makeContext } from './context.mjs';
import { watchArborFrames } from './frames.mjs';
import { activity, STALL_MS, visible, withPatience } from './patience.mjs';

export { EXTENSION_ID, FlowFailure, RELEASE_DELAY_MS, SEL, say, secs, sleep } from './common.mjs';
export { activity, PATIENCE, patiently, until, visible, withPatience } from './patience.mjs';
export { command, pick, typeInPalette } from './quick-input.mjs';

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
  let frames;
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
    // What must be on disk before the window opens (the extension reads it when its harness opens).
    await flow.prepare?.({ folder, model, say });
    server = await startCodeServer({
      folder,
      smokeDriver: true,
      logFile: serverLog,
      settings,
      ...(flow.userDataDir ? { userDataDir: flow.userDataDir } : {}),
      ...(flow.env ? { env: flow.env } : {}),
    });
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
    frames = watchArborFrames(page);
    // Progress, for the patient waits: the workbench's CPU use, and model requests served.
    activity.start({ groups: [server.pid, workbench.browserPgid], signals: [() => model.requests.length] });
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
        await withPatience(fn(), timeoutMs, `step ${n} ${name}`);
      } catch (err) {
        throw new FlowFailure(`[${flow.name}] step ${n} "${name}" failed: ${err.message}`);
      }
      await page.screenshot({ path: join(outDir, `${current}.png`), timeout: 15_000 });
      activity.progressed();
      stepTimes.push(`${current} ${secs(Date.now() - t0)} s`);
      say(`[${flow.name}] step ${n} ${name} passed in ${secs(Date.now() - t0)} s`);
    };
    // The workbench loading: its page keeps growing until the activity bar shows.
    await visible(page.locator(SEL.workbench), 'the workbench', 60_000, {
      stallMs: STALL_MS,
      signature: () => page.evaluate(() => document.getElementsByTagName('*').length),
    });
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
    frames?.stop();
    activity.stop();
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
    say(`[${flow.name}] ${activity.summary()}`);
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
