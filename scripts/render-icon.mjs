// Renders the extension's icon (media/arbor-icon.png, 256×256, the Extensions view and the
// marketplace) from media/arbor.svg, the activity bar's glyph: white strokes on a green tile.
// Run after changing the glyph: `node scripts/render-icon.mjs` (Chromium via playwright-core
// from .tools/driver, installed by `npm run setup:e2e`). The PNG is committed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium as chromiumPath, loadPlaywright, repoRoot } from './e2e/paths.mjs';

const SIZE = 256;
const glyph = readFileSync(join(repoRoot, 'media', 'arbor.svg'), 'utf8').replace(/width="24" height="24"/, `width="${SIZE * 0.72}" height="${SIZE * 0.72}"`);
const html = `<!doctype html><html><body style="margin:0;background:transparent">
<div id="tile" style="width:${SIZE}px;height:${SIZE}px;border-radius:${SIZE * 0.18}px;background:linear-gradient(160deg,#2f8f5b,#1d5e3b);display:flex;align-items:center;justify-content:center;color:#fff">${glyph}</div>
</body></html>`;

const { chromium } = await loadPlaywright();
const browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
try {
  const page = await browser.newPage({ viewport: { width: SIZE, height: SIZE } });
  await page.setContent(html);
  const out = join(repoRoot, 'media', 'arbor-icon.png');
  await page.locator('#tile').screenshot({ path: out, omitBackground: true });
  console.log(`wrote ${out}`);
} finally {
  await browser.close();
}
