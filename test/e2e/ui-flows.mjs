// UI end-to-end flows on the real VS Code workbench (code-server) in headless Chromium.
// Each file in test/e2e/flows/ is one flow with its own code-server, profile, workspace copy
// and scripted model (test/support/demo-script.ts served by test/support/model-server.ts);
// see test/e2e/lib/flow.mjs for the helpers. Flows run one after another.
//
// Usage: npm run test:ui [-- flow-name …]   (after npm run setup:e2e and npm run build)
// Artifacts: test-artifacts/ui-flows/<flow>/NN-step.png, and on failure failure-NN-step.png;
// code-server.log, console.log and the extension's Arbor log are always kept.
// ARBOR_E2E_HEADED=1 shows the browser (needs a display).
// ARBOR_UI_LOAD=N runs N busy processes (one core each) beside the flows, to prove they hold on a
// loaded machine: waits follow what the workbench is doing (lib/patience.mjs), not the clock.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { artifactsDir, missingTools, repoRoot } from '../../scripts/e2e/paths.mjs';
import { FlowFailure, runFlow, say, secs, withPatience } from './lib/flow.mjs';

/** Each flow's whole budget (its steps have smaller ones); like theirs, it stretches while the workbench is busy. */
const FLOW_TIMEOUT_MS = Number(process.env.ARBOR_UI_FLOWS_TIMEOUT_MS ?? 300_000);

/** ARBOR_UI_LOAD=N: N processes that keep one core busy each, stopped when this process exits. */
function startLoad(n) {
  const hogs = [];
  for (let i = 0; i < n; i++) hogs.push(spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
  process.on('exit', () => {
    for (const h of hogs) h.kill('SIGKILL');
  });
  if (n > 0) say(`load: ${n} busy process(es) beside the flows (pids ${hogs.map((h) => h.pid).join(' ')})`);
}

async function main() {
  const missing = missingTools();
  if (missing.length) throw new FlowFailure(`E2E tools missing (${missing.join(', ')}). Run: npm run setup:e2e`);
  const needed = ['dist/extension.js', 'dist/host.js', 'dist/webview/index.js', 'out/test/support/model-server.js', 'out/test/support/demo-script.js'];
  for (const built of needed) {
    if (!existsSync(join(repoRoot, built))) throw new FlowFailure(`${built} is missing. Run: npm run build`);
  }
  const dir = join(repoRoot, 'test', 'e2e', 'flows');
  const wanted = process.argv.slice(2);
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.mjs'))
    .sort();
  const flows = [];
  for (const f of files) {
    const { flow } = await import(pathToFileURL(join(dir, f)).href);
    if (!flow?.name || typeof flow.run !== 'function') throw new FlowFailure(`${f} exports no flow { name, run }`);
    if (wanted.length === 0 || wanted.includes(flow.name)) flows.push(flow);
  }
  const unknown = wanted.filter((w) => !flows.some((f) => f.name === w));
  if (unknown.length) throw new FlowFailure(`no flow named ${unknown.join(', ')} (flows: ${files.join(', ')})`);
  if (wanted.length === 0) rmSync(join(artifactsDir, 'ui-flows'), { recursive: true, force: true });
  startLoad(Number(process.env.ARBOR_UI_LOAD ?? 0));
  const times = [];
  for (const flow of flows) {
    const t0 = Date.now();
    await withPatience(runFlow(flow), flow.timeoutMs ?? FLOW_TIMEOUT_MS, `flow ${flow.name}`);
    times.push(`${flow.name} ${secs(Date.now() - t0)} s`);
  }
  say(`flows passed: ${times.join('; ')}`);
  return flows.length;
}

main().then(
  (n) => {
    console.log(`ui-flows: PASS, ${n} flow(s) in ${secs()} s (screenshots in ${relative(repoRoot, join(artifactsDir, 'ui-flows'))}/)`);
    process.exit(0);
  },
  (err) => {
    console.error(`ui-flows: FAIL after ${secs()} s — ${err instanceof FlowFailure ? err.message : err.stack}`);
    console.error(`  see ${relative(repoRoot, join(artifactsDir, 'ui-flows'))}/ (failure-*.png, code-server.log, console.log, logs/)`);
    // The exit hook of scripts/e2e/code-server.mjs kills code-server and Chromium and removes temp dirs.
    process.exit(1);
  },
);
