// Runs the packaged-extension tests (out/test/host-vsix, compiled from test/host-vsix by
// `npm run build`): packs the built extension into a .vsix (scripts/vsix.mjs), installs it with
// `code-server --install-extension` into a fresh extensions folder (scripts/e2e/install-vsix.mjs),
// then runs the tests in code-server on that folder with @vscode/test-electron, through the same
// launcher as `test/e2e/run-host-tests.mjs`. The launcher needs one development extension to
// carry the tests: an empty probe made here (another id, so the installed Arbor is the one that
// runs). Then it opens the installed extension's details page in code-server and checks that the
// README's images load there (test/e2e/vsix-details-page.mjs: packed against a local https server
// standing in for ARBOR_VSIX_IMAGES_URL; decision 0051).
// Usage: node test/e2e/run-vsix-host-tests.mjs (after npm run setup:e2e and npm run build).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTests } from '@vscode/test-electron';
import { installVsix } from '../../scripts/e2e/install-vsix.mjs';
import { missingTools, repoRoot } from '../../scripts/e2e/paths.mjs';
import { packVsix, SHIPPED_README } from '../../scripts/vsix.mjs';
import { checkDetailsPage, startImageServer } from './vsix-details-page.mjs';

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
let images;
/** The README the last packVsix shipped, and its Markdown images. */
const shipped = () => {
  const text = readFileSync(join(repoRoot, SHIPPED_README), 'utf8');
  return { text, images: [...text.matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]) };
};
try {
  // Without an images URL the details page gets each screenshot's caption, never a broken image.
  packVsix(join(scratch, 'plain.vsix'), '');
  const plain = shipped();
  if (plain.images.length !== 0 || !plain.text.includes('*Screenshot: '))
    throw new Error(`the default package's README has images VS Code cannot show: ${plain.images.join(', ')}`);
  // With one (here a local https server), every image points there.
  images = await startImageServer(join(scratch, 'images'));
  const vsix = join(scratch, 'arbor.vsix');
  const bytes = packVsix(vsix, images.url);
  const linked = shipped().images;
  if (linked.length !== 3 || !linked.every((src) => src.startsWith(`${images.url}docs/screenshots/`)))
    throw new Error(`the packaged README's images do not point at ${images.url}: ${linked.join(', ')}`);
  const folder = installVsix(vsix, { extensionsDir, userDataDir, scratch });
  console.log(`test:host (vsix): packed ${(bytes / 1048576).toFixed(2)} MiB, installed ${folder} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.env.ARBOR_VSIX_EXTENSIONS_DIR = extensionsDir;
  code = await runTests({
    vscodeExecutablePath: launcher,
    extensionDevelopmentPath: probe,
    extensionTestsPath: testsEntry,
    launchArgs: [join(scratch, 'workspace'), `--user-data-dir=${userDataDir}`, `--extensions-dir=${extensionsDir}`],
  });
  if (code === 0) {
    const page = await checkDetailsPage({ extensionsDir, scratch, say: (m) => console.log(`test:host (vsix): ${m}`) });
    const shown = page.images.map((i) => `${i.src?.slice(images.url.length) ?? '(no src)'} ${i.naturalWidth}x${i.naturalHeight}`);
    console.log(`test:host (vsix): details page images: ${shown.join(', ')}`);
    const loaded = page.images.filter((i) => i.naturalWidth > 0 && i.src?.startsWith(images.url));
    if (page.images.length !== 3 || loaded.length !== 3) {
      code = 1;
      console.error(`test:host (vsix): the details page shows ${loaded.length} of 3 README images (${shown.join(', ') || 'no <img> at all'})`);
    } else if (new Set(images.served).size !== 3) {
      code = 1;
      console.error(`test:host (vsix): the image server answered ${JSON.stringify(images.served)}, not the three screenshots`);
    }
  }
} catch (err) {
  code = 1;
  console.error(`test:host (vsix): ${err.message}`);
} finally {
  await images?.stop();
  rmSync(scratch, { recursive: true, force: true });
}
console.log(`test:host (vsix): exit ${code} after ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exit(code);
