// The installed extension's details page, as the Extensions view shows it (issue 21.7, decision
// 0051): the README's images load there only from https. The vsix test packs Arbor with its
// images pointing at `startImageServer()` — a local https server standing in for where the
// images are published (ARBOR_VSIX_IMAGES_URL) — and `checkDetailsPage()` opens the installed
// extension's details page in code-server and reads every image's natural size.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { extname, join, normalize, sep } from 'node:path';
import { openWorkbench, startCodeServer } from '../../scripts/e2e/code-server.mjs';
import { repoRoot } from '../../scripts/e2e/paths.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * An https server on 127.0.0.1 serving the repository's docs/screenshots/ (a self-signed
 * certificate made with openssl in `dir`). `served` lists the paths it answered with 200.
 */
export async function startImageServer(dir) {
  mkdirSync(dir, { recursive: true });
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'pipe' },
    );
  } catch (err) {
    throw new Error(`openssl could not make a test certificate (${err.message.split('\n')[0]}); install openssl (apt-get install openssl)`);
  }
  const root = join(repoRoot, 'docs', 'screenshots');
  const served = [];
  const server = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'https://127.0.0.1').pathname);
    const file = normalize(join(repoRoot, path));
    if (!file.startsWith(root + sep) || extname(file) !== '.png' || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    served.push(path);
    res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'no-store' }).end(readFileSync(file));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${server.address().port}/`,
    served,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * Opens Arbor's details page (Extensions view → installed → Arbor) in code-server on
 * `extensionsDir` and returns every README image with its source and natural size, once each
 * has finished loading (or failed). Throws when the page or its README does not show.
 */
export async function checkDetailsPage({ extensionsDir, scratch, displayName = 'Arbor', say = console.log }) {
  const folder = join(scratch, 'details-workspace');
  mkdirSync(folder, { recursive: true });
  const server = await startCodeServer({ folder, extensionsDir, userDataDir: join(scratch, 'details-user-data') });
  let workbench;
  try {
    workbench = await openWorkbench(server.url, { folder, ignoreHTTPSErrors: true });
    const { page } = workbench;
    await page.locator('.monaco-workbench .part.activitybar').waitFor({ state: 'visible', timeout: 90_000 });
    // The installed extensions list (the palette's command, as a person would find it).
    const input = page.locator('.quick-input-widget input');
    for (let attempt = 1; ; attempt++) {
      try {
        await page.keyboard.press('F1');
        await input.waitFor({ state: 'visible', timeout: 10_000 });
        await input.fill('>Extensions: Show Installed Extensions', { timeout: 5_000 });
        const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Show Installed Extensions' }).first();
        await row.waitFor({ state: 'visible', timeout: 10_000 });
        await row.click({ timeout: 5_000 });
        break;
      } catch (err) {
        if (attempt === 3) throw new Error(`the command "Extensions: Show Installed Extensions" could not be run (${err.message.split('\n')[0]})`);
        await page.keyboard.press('Escape').catch(() => undefined);
        await sleep(1_000);
      }
    }
    const entry = page.locator('.extensions-viewlet .monaco-list-row', { has: page.locator('.name', { hasText: new RegExp(`^${displayName}$`) }) }).first();
    await entry.waitFor({ state: 'visible', timeout: 60_000 });
    await entry.click({ timeout: 10_000 });
    await page.locator('.extension-editor .header .name', { hasText: displayName }).waitFor({ state: 'visible', timeout: 30_000 });
    say(`[vsix details] the details page of ${displayName} is open`);
    // The README is a webview two frames deep; found by its content, not by a URL parameter.
    const deadline = Date.now() + 60_000;
    for (;;) {
      for (const frame of page.frames()) {
        if (frame === page.mainFrame()) continue;
        const seen = await frame
          .evaluate(() => {
            if (!document.querySelector('h1')) return undefined;
            const imgs = [...document.querySelectorAll('img')];
            if (imgs.some((i) => i.getAttribute('src') && !i.complete)) return 'loading';
            return {
              title: document.querySelector('h1')?.textContent?.trim(),
              text: document.body.textContent ?? '',
              images: imgs.map((i) => ({ src: i.getAttribute('src'), alt: i.alt, naturalWidth: i.naturalWidth, naturalHeight: i.naturalHeight })),
            };
          })
          .catch(() => undefined);
        if (seen && seen !== 'loading' && seen.title === displayName) return seen;
      }
      if (Date.now() > deadline) throw new Error('the README did not show on the details page within 60 s (or its images never finished loading)');
      await sleep(300);
    }
  } finally {
    await workbench?.close();
    await server.stop();
  }
}
