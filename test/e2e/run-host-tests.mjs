// Runs the extension-host tests (out/test/host, compiled from test/host by `npm run build`)
// with @vscode/test-electron, unchanged. VS Code desktop cannot be downloaded here, so the
// executable is scripts/e2e/launcher.mjs, which runs the same tests in code-server.
// Where VS Code can be downloaded, dropping vscodeExecutablePath runs them on desktop.
// Usage: npm run test:host   (after npm run setup:e2e and npm run build)
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTests } from '@vscode/test-electron';
import { missingTools, repoRoot } from '../../scripts/e2e/paths.mjs';

const launcher = join(repoRoot, 'scripts', 'e2e', 'launcher.mjs');
const testsEntry = join(repoRoot, 'out', 'test', 'host', 'index.js');

function fail(message) {
  console.error(`test:host: ${message}`);
  process.exit(1);
}

const missing = missingTools();
if (missing.length) fail(`E2E tools missing (${missing.join(', ')}). Run: npm run setup:e2e`);
for (const built of [testsEntry, join(repoRoot, 'dist', 'extension.js')]) {
  if (!existsSync(built)) fail(`${built} is missing. Run: npm run build`);
}
const source = join(repoRoot, 'test', 'host', 'index.ts');
if (statSync(source).mtimeMs > statSync(testsEntry).mtimeMs) {
  console.warn('test:host: out/test/host is older than test/host; run npm run build to test the current sources');
}

// Fresh profile and a throwaway workspace per run; nothing is written into the repository
// (test-electron's default would be .vscode-test/ in the current directory).
const scratch = mkdtempSync(join(tmpdir(), 'arbor-test-host-'));
mkdirSync(join(scratch, 'workspace'));
const started = Date.now();
let code = 1;
try {
  code = await runTests({
    vscodeExecutablePath: launcher,
    extensionDevelopmentPath: repoRoot,
    extensionTestsPath: testsEntry,
    launchArgs: [join(scratch, 'workspace'), `--user-data-dir=${join(scratch, 'user-data')}`, `--extensions-dir=${join(scratch, 'extensions')}`],
  });
} catch (err) {
  console.error(`test:host: ${err.message}`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
console.log(`test:host: exit ${code} after ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exit(code);
