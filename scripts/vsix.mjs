// Packs the built extension (dist/, see .vscodeignore) into a .vsix with vsce, offline, under
// the Node 24 that scripts/e2e/setup.mjs installs (vsce 4 needs Node >= 22). The details page
// is README.user.md (the user's README; README.md is the developers'), shipped as readme.md.
//
// Its images (docs/screenshots/*.png, allow-listed in .vscodeignore, so they ship) are
// relative. VS Code's extension editor shows README images only from http(s) URLs (its
// sanitizer drops relative and data: sources; checked in code-server 4.139.1): the Marketplace
// rewrites relative ones to where the package is published, a local .vsix shows their alt
// text. ARBOR_VSIX_IMAGES_URL (e.g. https://raw.githubusercontent.com/OWNER/REPO/main/) makes
// vsce rewrite them to that base, which the details page then shows (online).
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { envWithNode24, node24, repoRoot, vsceEntry } from './e2e/paths.mjs';

/** Writes `out` (absolute) and returns its size in bytes; throws with vsce's output when it fails. `imagesUrl`: see above. */
export function packVsix(out, imagesUrl = process.env.ARBOR_VSIX_IMAGES_URL) {
  const r = spawnSync(
    node24,
    [
      vsceEntry,
      'package',
      '--no-dependencies',
      '--allow-missing-repository',
      // vsce finds the README by its path inside the package (so .vscodeignore keeps it).
      '--readme-path',
      'README.user.md',
      ...(imagesUrl ? ['--baseImagesUrl', imagesUrl, '--baseContentUrl', imagesUrl] : ['--no-rewrite-relative-links']),
      '-o',
      out,
    ],
    { cwd: repoRoot, encoding: 'utf8', env: envWithNode24() },
  );
  if (r.status !== 0) throw new Error(`vsce package failed (exit ${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`);
  return statSync(out).size;
}
