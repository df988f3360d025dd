// `npm start [-- --demo] [-- --port N]`: build Arbor, install what the real VS Code needs
// (code-server, Chromium's libraries: into .tools/, once), open a sample workspace with the
// extension in development mode, and print the URL to open. `--demo` points the extension at
// the bundled scripted model, so the tree can be explored without an API key.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { repoRoot, toolsDir } from './e2e/paths.mjs';

const args = process.argv.slice(2);
const demo = args.includes('--demo');
const portArg = args.indexOf('--port');
const port = portArg >= 0 ? Number(args[portArg + 1]) : undefined;
const started = Date.now();
const steps = 4;
let step = 0;
const say = (what) => console.log(`[arbor start ${++step}/${steps}, ${((Date.now() - started) / 1000).toFixed(0)} s] ${what}`);

function run(cmd, cmdArgs, what) {
  const r = spawnSync(cmd, cmdArgs, { cwd: repoRoot, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`arbor start: ${what} failed (exit ${r.status}). Fix the error above and run npm start again.`);
    process.exit(1);
  }
}

say('building the extension (tsc, esbuild, vite)…');
run('npm', ['run', 'build', '--silent'], 'the build');

say('installing the real VS Code (code-server + Node 24) and Chromium libraries into .tools/ — the first time takes a few minutes…');
run(process.execPath, [join(repoRoot, 'scripts', 'e2e', 'setup.mjs')], 'the installer');

say('preparing the sample workspace…');
const workspace = join(toolsDir, 'sample-workspace');
if (!existsSync(workspace)) {
  mkdirSync(workspace, { recursive: true });
  cpSync(join(repoRoot, 'media', 'sample-workspace'), workspace, { recursive: true });
}
const settings = { 'workbench.startupEditor': 'none' };
let model;
if (demo) {
  const require = createRequire(import.meta.url);
  const { ModelServer } = require(join(repoRoot, 'out', 'test', 'support', 'model-server.js'));
  const { demoReply, DEMO_PROMPTS } = require(join(repoRoot, 'out', 'test', 'support', 'demo-script.js'));
  model = await ModelServer.start();
  model.setFallback((body) => demoReply(body));
  Object.assign(settings, { 'arbor.model.baseUrl': model.baseURL, 'arbor.model.name': 'arbor-demo', 'arbor.subagents.releaseDelayMs': 1500, 'arbor.chat.examplePrompts': [...DEMO_PROMPTS] });
  console.log(`  demo model (scripted) at ${model.baseURL}`);
}

say('starting code-server…');
const { startCodeServer, workbenchUrl } = await import('./e2e/code-server.mjs');
const userDataDir = join(toolsDir, 'start', demo ? 'user-data-demo' : 'user-data');
const server = await startCodeServer({ folder: workspace, port, userDataDir, extensionsDir: join(toolsDir, 'start', 'extensions'), smokeDriver: true, settings });
const url = workbenchUrl(server.url, { folder: workspace, devExtensionPath: repoRoot });
writeFileSync(join(toolsDir, 'start', 'url.txt'), `${url}\n`);
console.log(`\nArbor is running in VS Code (code-server, ${((Date.now() - started) / 1000).toFixed(0)} s). Open this URL in a browser on this machine:\n\n  ${url}\n`);
console.log('Click the Arbor icon in the activity bar to open the panel.');
if (!demo && !process.env.ARBOR_API_KEY && !process.env.DEEPSEEK_API_KEY && !process.env.OPENAI_API_KEY) {
  console.log('No API key found: in VS Code run "Arbor: Set API Key" (F1), or restart with DEEPSEEK_API_KEY set,');
  console.log('or try it without a key: npm start -- --demo');
}
console.log('Press Ctrl+C to stop.');

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  console.log('\nstopping…');
  await server.stop();
  await model?.stop();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
