// `npm start [-- --demo] [-- --port N]`: on a fresh clone or an old one, install what is
// missing or stale (npm ci when node_modules does not match the lock file; code-server and
// Chromium's libraries into .tools/, once), build, open the sample workspace with Arbor in
// development mode, and print the URL to open.
//
// Without an API key in the environment the bundled scripted demo model is served beside
// it and the extension uses it until a key (or a local endpoint) is configured; the panel
// says how to switch. `--demo` uses the demo model even when a key is set.
//
// Sessions survive restarts: the workbench keys a workspace's storage (where Arbor's store
// lives) by the address it is served from, so every run reuses the same port (remembered in
// .tools/start/port.json; `--port N` picks another) and the same profile.
// ARBOR_START_HOME moves the profile, workspace and port file (the restart test uses it).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { repoRoot, toolsDir } from './e2e/paths.mjs';
import { ensureDeps } from './ensure-deps.mjs';

const args = process.argv.slice(2);
const demo = args.includes('--demo');
const skipBuild = args.includes('--skip-build');
const portArg = args.indexOf('--port');
const home = process.env.ARBOR_START_HOME || join(toolsDir, 'start');
const started = Date.now();
const steps = 5;
let step = 0;
const say = (what) => console.log(`[arbor start ${++step}/${steps}, ${((Date.now() - started) / 1000).toFixed(0)} s] ${what}`);

function run(cmd, cmdArgs, what) {
  const r = spawnSync(cmd, cmdArgs, { cwd: repoRoot, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`arbor start: ${what} failed (exit ${r.status}). Fix the error above and run npm start again.`);
    process.exit(1);
  }
}

say('checking the dependencies (npm ci when node_modules is missing or stale)…');
const installed = ensureDeps('arbor start');

say(installed || skipBuild ? 'built by npm ci (or --skip-build)' : 'building the extension (tsc, esbuild, vite)…');
if (!installed && !skipBuild) run('npm', ['run', 'build', '--silent'], 'the build');

say(
  'installing the real VS Code (code-server + Node 24) and Chromium libraries into .tools/ — the first time takes minutes (mostly the code-server install: 5 min to well over 30, see "The first start" in the README)…',
);
run(process.execPath, [join(repoRoot, 'scripts', 'e2e', 'setup.mjs')], 'the installer');

say('preparing the sample workspace and the demo model…');
mkdirSync(home, { recursive: true });
const workspace = join(home, 'sample-workspace');
if (!existsSync(workspace)) {
  mkdirSync(workspace, { recursive: true });
  cpSync(join(repoRoot, 'media', 'sample-workspace'), workspace, { recursive: true });
}
// The demo's project files (issue 23: an AGENTS.md and one agent file), added to a workspace made
// before them too; the user's own edits are kept. UI flows copy the sample without them.
cpSync(join(repoRoot, 'media', 'demo-project'), workspace, { recursive: true, force: false });
// The demo's hook (a PreToolUse hook that blocks `rm -rf`, decision 0057), also into a sample
// workspace made before it shipped.
if (!existsSync(join(workspace, '.arbor', 'settings.json'))) {
  cpSync(join(repoRoot, 'media', 'sample-workspace', '.arbor'), join(workspace, '.arbor'), { recursive: true });
}
// Children in their own git worktrees (issue 24) need a repository: a sample workspace that is
// not one becomes one (init + first commit); an existing repository is left alone.
{
  const { ensureSampleRepo } = createRequire(import.meta.url)(join(repoRoot, 'out', 'test', 'support', 'sample-repo.js'));
  const repo = ensureSampleRepo(workspace);
  if (repo.state === 'made') say('made the sample workspace a git repository (one first commit) so children can work in worktrees');
  if (repo.state === 'failed')
    say(`the sample workspace is not a git repository, so the worktree scenes will not work (${repo.why}); install git and run npm start again`);
}
// One stdio MCP server from npm (server-everything, installed in node_modules): the panel asks
// once to allow it (decision 0055). Written only where the workspace has no .mcp.json of its own.
const mcpJson = join(workspace, '.mcp.json');
if (!existsSync(mcpJson)) {
  const everything = join(repoRoot, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
  writeFileSync(mcpJson, `${JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [everything, 'stdio'] } } }, null, 2)}\n`);
}
const hasKey = Boolean(process.env.ARBOR_API_KEY || process.env.DEEPSEEK_API_KEY || process.env.OPENAI_API_KEY);
const settings = { 'workbench.startupEditor': 'none' };
const env = {};
let model;
if (demo || !hasKey) {
  const require = createRequire(import.meta.url);
  const { ModelServer } = require(join(repoRoot, 'out', 'test', 'support', 'model-server.js'));
  const { demoResponder, DEMO_PROMPTS, DEMO_STEP_MS } = require(join(repoRoot, 'out', 'test', 'support', 'demo-script.js'));
  model = await ModelServer.start();
  // Paced for a person (workflow agents and goal rounds take a few seconds each, so they can be
  // watched and stopped); ARBOR_DEMO_STEP_MS changes the pace, 0 answers at the tests' speed.
  const stepMs = process.env.ARBOR_DEMO_STEP_MS !== undefined ? Number(process.env.ARBOR_DEMO_STEP_MS) : DEMO_STEP_MS;
  model.setFallback(demoResponder({ stepMs: Number.isFinite(stepMs) && stepMs > 0 ? stepMs : 0 }));
  // The empty panel lists the demo's prompts (as buttons) while the demo model answers.
  settings['arbor.chat.examplePrompts'] = [...DEMO_PROMPTS];
  if (demo) Object.assign(settings, { 'arbor.model.baseUrl': model.baseURL, 'arbor.model.name': 'arbor-demo', 'arbor.subagents.releaseDelayMs': 1500 });
  // Without --demo the extension falls back to it only while no key or local endpoint is configured.
  else env.ARBOR_DEMO_BASE_URL = model.baseURL;
  console.log(`  demo model (scripted) at ${model.baseURL}${demo ? '' : ' — used until you set an API key'}`);
}

// One port for this profile, every run: a new port would be a new origin with empty storage.
const portFile = join(home, 'port.json');
let port = portArg >= 0 ? Number(args[portArg + 1]) : undefined;
if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) {
  console.error(`arbor start: --port wants a port number (1-65535), got ${JSON.stringify(args[portArg + 1])}.`);
  process.exit(2);
}
if (port === undefined && existsSync(portFile)) {
  try {
    port = JSON.parse(readFileSync(portFile, 'utf8')).port;
  } catch {
    port = undefined;
  }
}

say('starting code-server…');
const { freePort, startCodeServer, workbenchUrl } = await import('./e2e/code-server.mjs');
port ??= await freePort();
const userDataDir = join(home, demo ? 'user-data-demo' : 'user-data');
let server;
try {
  server = await startCodeServer({ folder: workspace, port, userDataDir, extensionsDir: join(home, 'extensions'), smokeDriver: true, settings, env });
} catch (err) {
  await model?.stop();
  const busy = err.addressInUse
    ? ` Port ${port} is in use: is another \`npm start\` running? Stop it, or start on another port with \`npm start -- --port N\` (sessions are kept per port).`
    : '';
  console.error(`arbor start: code-server did not start: ${err.message}.${busy}`);
  process.exit(1);
}
writeFileSync(portFile, `${JSON.stringify({ port })}\n`);
const url = workbenchUrl(server.url, { folder: workspace, devExtensionPath: repoRoot });
writeFileSync(join(home, 'url.txt'), `${url}\n`);
console.log(
  `\nArbor is running in VS Code (code-server, ${((Date.now() - started) / 1000).toFixed(0)} s). Open this URL in a browser on this machine:\n\n  ${url}\n`,
);
console.log('Click the Arbor icon in the activity bar to open the panel.');
if (!demo && !hasKey) {
  // A key stored in VS Code (SecretStorage) is not visible from here: say only what this script knows.
  console.log('No API key in the environment. Unless you stored one in VS Code ("Arbor: Set API Key"; the panel has a button), the bundled');
  console.log(
    'demo model answers. Or restart with DEEPSEEK_API_KEY set, or point arbor.model.baseUrl at a local OpenAI-compatible endpoint (Ollama, vLLM, LM Studio).',
  );
}
console.log('Press Ctrl+C to stop. Your sessions are kept for the next npm start.');

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
