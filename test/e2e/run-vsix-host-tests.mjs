// Runs the packaged-extension tests (out/test/host-vsix, compiled from test/host-vsix by
// `npm run build`): packs the built extension into a .vsix (scripts/vsix.mjs), installs it with
// `code-server --install-extension` into a fresh extensions folder (scripts/e2e/install-vsix.mjs),
// then runs the tests in code-server on that folder with @vscode/test-electron, through the same
// launcher as `test/e2e/run-host-tests.mjs`. The launcher needs one development extension to
// carry the tests: an empty probe made here (another id, so the installed Arbor is the one that
// runs). Usage: node test/e2e/run-vsix-host-tests.mjs (after npm run setup:e2e and npm run build).
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTests } from '@vscode/test-electron';
import { installVsix } from '../../scripts/e2e/install-vsix.mjs';
import { missingTools, repoRoot } from '../../scripts/e2e/paths.mjs';
import { packVsix } from '../../scripts/vsix.mjs';

const launcher = join(repoRoot, 'scripts', 'e2e', 'launcher.mjs');
const testsEntry = join(repoRoot, 'out', 'test', 'host-vsix', 'index.js');

function fail(message) {
  console.error(`test:host (vsix): ${message}`);
  process.exit(1);
}

const missing = missingTools();
if (missing.length) fail(`E2E tools missing (${missing.join(', ')}). Run: npm run setup:e2e`);
for (const built of [testsEntry, join(repoRoot, 'dist', 'extension.js'), join(repoRoot, 'dist', 'host.js')]) {
  if (!existsSync(built)) fail(`${built} is missing. Run: npm run build`);
}

const scratch = mkdtempSync(join(tmpdir(), 'arbor-test-vsix-'));
const extensionsDir = join(scratch, 'extensions');
const userDataDir = join(scratch, 'user-data');
const probe = join(scratch, 'probe');
mkdirSync(join(scratch, 'workspace'));
mkdirSync(probe);
writeFileSync(
  join(probe, 'package.json'),
  JSON.stringify({ name: 'arbor-vsix-probe', publisher: 'arbor-test', version: '0.0.0', engines: { vscode: '^1.95.0' } }, null, 2),
);
const started = Date.now();
let code = 1;
try {
  const vsix = join(scratch, 'arbor.vsix');
  const bytes = packVsix(vsix);
  const folder = installVsix(vsix, { extensionsDir, userDataDir, scratch });
  console.log(`test:host (vsix): packed ${(bytes / 1048576).toFixed(2)} MiB, installed ${folder} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.env.ARBOR_VSIX_EXTENSIONS_DIR = extensionsDir;
  code = await runTests({
    vscodeExecutablePath: launcher,
    extensionDevelopmentPath: probe,
    extensionTestsPath: testsEntry,
    launchArgs: [join(scratch, 'workspace'), `--user-data-dir=${userDataDir}`, `--extensions-dir=${extensionsDir}`],
  });
} catch (err) {
  console.error(`test:host (vsix): ${err.message}`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
console.log(`test:host (vsix): exit ${code} after ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exit(code);
