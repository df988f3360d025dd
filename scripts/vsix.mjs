// Packs the built extension (dist/, see .vscodeignore) into a .vsix with vsce, offline, under
// the Node 24 that scripts/e2e/setup.mjs installs (vsce 4 needs Node >= 22). The details page
// is README.user.md (the user's README; README.md is the developers'), written for the package
// as dist/README.vsix.md by `shippedReadme` and shipped as readme.md.
//
// Images on the details page (decision 0051): VS Code's extension editor renders the README in a
// webview whose sanitizer keeps an image only with an http(s) source (relative paths and data:
// URIs are dropped) and whose CSP loads images only over https — so a relative image, or one
// embedded as data:, never shows from a local .vsix, and shipping the PNGs does not help. With
// ARBOR_VSIX_IMAGES_URL (an https base, e.g. https://raw.githubusercontent.com/OWNER/REPO/main/)
// every image points there and the page shows them (the vsix host test proves it against a local
// https server). Without it the page shows each image's caption instead of a broken image.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { envWithNode24, node24, repoRoot, vsceEntry } from './e2e/paths.mjs';

/** The README the package ships (repository-relative path, allow-listed in .vscodeignore). */
export const SHIPPED_README = 'dist/README.vsix.md';

/** A Markdown image with a relative source: `![alt](path)`. */
const RELATIVE_IMAGE = /!\[([^\]]*)\]\((?![a-z][a-z0-9+.-]*:)([^)\s]+)\)/gi;

/**
 * README.user.md as the details page gets it: each relative image against `imagesUrl` (https,
 * ending in /), or, without one, replaced by its caption in italics (a line of its own).
 */
export function shippedReadme(text, imagesUrl) {
  if (imagesUrl !== undefined && imagesUrl !== '') {
    if (!/^https:\/\/[^/]+/.test(imagesUrl))
      throw new Error(`ARBOR_VSIX_IMAGES_URL must be an https URL (VS Code's details page loads images only over https), got ${JSON.stringify(imagesUrl)}.`);
    const base = imagesUrl.endsWith('/') ? imagesUrl : `${imagesUrl}/`;
    return text.replace(RELATIVE_IMAGE, (_m, alt, path) => `![${alt}](${new URL(path.replace(/^\.\//, ''), base).href})`);
  }
  return text.replace(RELATIVE_IMAGE, (_m, alt) => `*Screenshot: ${alt}.*`);
}

/** Writes `out` (absolute) and returns its size in bytes; throws with vsce's output when it fails. `imagesUrl`: see above. */
export function packVsix(out, imagesUrl = process.env.ARBOR_VSIX_IMAGES_URL) {
  mkdirSync(join(repoRoot, 'dist'), { recursive: true });
  writeFileSync(join(repoRoot, SHIPPED_README), shippedReadme(readFileSync(join(repoRoot, 'README.user.md'), 'utf8'), imagesUrl));
  const r = spawnSync(
    node24,
    [
      vsceEntry,
      'package',
      '--no-dependencies',
      '--allow-missing-repository',
      // vsce finds the README by its path inside the package (so .vscodeignore keeps it).
      '--readme-path',
      SHIPPED_README,
      // Its links are already what they should be (above): vsce must not guess a repository.
      '--no-rewrite-relative-links',
      '-o',
      out,
    ],
    { cwd: repoRoot, encoding: 'utf8', env: envWithNode24() },
  );
  if (r.status !== 0) throw new Error(`vsce package failed (exit ${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`);
  return statSync(out).size;
}
