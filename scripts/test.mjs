// `npm test`: every tier, on a fresh clone with nothing run before it. Installs the
// dependencies when node_modules is missing or stale, builds, installs the real VS Code
// (code-server) and Chromium into .tools/ (first time only), the pinned real remote agent
// programs (codex, claude) into .tools/remote/, the ACP test client (acpx) into .tools/acp/ and
// the real ACP agents (claude-agent-acp, codex-acp, the SDK example agent) into .tools/acp-agents/,
// then runs, in order: the linter and formatter check (biome), the unit, store, CLI and webview tests (mocha), the remote tier against
// the real programs (test/remote), the extension-host tests in code-server (development mode,
// then the packaged .vsix installed into a fresh extensions folder), and the UI
// flows in headless Chromium (test/e2e/flows/*.mjs), and the `npm start` restart check.
// Stops at the first tier that fails, naming it.
import { spawnSync } from 'node:child_process';
import { repoRoot } from './e2e/paths.mjs';
import { ensureDeps } from './ensure-deps.mjs';

const started = Date.now();
const tiers = [
  ['lint', ['npm', ['run', 'lint', '--silent']]],
  ['build', ['npm', ['run', 'build', '--silent']]],
  ['setup:e2e', ['npm', ['run', 'setup:e2e', '--silent']]],
  ['setup:remote', ['npm', ['run', 'setup:remote', '--silent']]],
  ['setup:acp', ['npm', ['run', 'setup:acp', '--silent']]],
  ['unit', ['npx', ['mocha']]],
  ['remote', ['npx', ['mocha', '--no-config', '--timeout', '120000', 'out/test/remote/**/*.test.js']]],
  ['host', ['npm', ['run', 'test:host', '--silent']]],
  ['ui', ['npm', ['run', 'test:ui', '--silent']]],
  ['start-restart', ['node', ['test/e2e/start-restart.mjs']]],
];

const installed = ensureDeps('npm test');
for (const [name, [cmd, args]] of tiers) {
  if (name === 'build' && installed) continue; // npm ci's prepare just built
  console.log(`\n[npm test] ── ${name} ──`);
  const t0 = Date.now();
  const r = spawnSync(cmd, args, { cwd: repoRoot, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`[npm test] the ${name} tier failed (exit ${r.status ?? r.signal}) after ${((Date.now() - t0) / 1000).toFixed(0)} s; see its output above.`);
    process.exit(1);
  }
  console.log(`[npm test] ${name} passed in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}
console.log(`\n[npm test] every tier passed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
