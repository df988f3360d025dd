// The side bar's width and what its tree rows show, measured in the real workbench: shared by
// the flows that check the panel at 300 px (VS Code's default) and 220 px.
import { slack } from './patience.mjs';

/** Drags the side bar's sash until the side bar is `width` px wide. */
export async function sideBarWidth(page, width, sleep) {
  const bar = page.locator('.part.sidebar');
  for (let attempt = 0; attempt < 3; attempt++) {
    const box = await bar.boundingBox({ timeout: slack(5_000) });
    if (Math.abs(box.width - width) <= 1) return;
    // The sash nearest the side bar's right edge (the floating editor leaves a gap).
    const edge = box.x + box.width;
    const sashes = await page.locator('.monaco-sash.vertical').evaluateAll((els) =>
      els
        .map((e) => e.getBoundingClientRect())
        .filter((r) => r.width > 0 && r.height > 100)
        .map((r) => r.left + r.width / 2),
    );
    const x = sashes.sort((a, b) => Math.abs(a - edge) - Math.abs(b - edge))[0] ?? edge;
    const y = box.y + box.height / 2;
    await page.mouse.move(x, y);
    await page.mouse.down();
    await page.mouse.move(x + (width - box.width) / 2, y, { steps: 4 });
    await page.mouse.move(x + (width - box.width), y, { steps: 4 });
    await page.mouse.up();
    await sleep(300);
  }
  const got = (await bar.boundingBox({ timeout: slack(5_000) })).width;
  if (Math.abs(got - width) > 2) throw new Error(`the side bar is ${got} px wide, wanted ${width}`);
}

/**
 * Runs in the webview, per tree row: how many characters of its name are drawn (glyph by glyph,
 * from the rendered text: those that end inside the name's box on the row's first line, less
 * the ellipsis when the name is cut), where the first piece of drawn metadata starts, whether
 * the remote program's badge and the status word are drawn.
 */
export function measureRows(rows) {
  const ctx = document.createElement('canvas').getContext('2d');
  return rows.map((r) => {
    const head = r.querySelector('.head');
    const name = r.querySelector('.name');
    const hr = head.getBoundingClientRect();
    const nr = name.getBoundingClientRect();
    const drawn = (el) => {
      if (!el || getComputedStyle(el).display === 'none') return false;
      const b = el.getBoundingClientRect();
      // On the first line (a wrapped-away item sits on the clipped second one) and inside the row.
      return b.width > 0 && b.top >= hr.top - 1 && b.bottom <= hr.bottom + 1 && b.right <= r.getBoundingClientRect().right + 1;
    };
    const text = name.firstChild;
    const cut = name.scrollWidth > name.clientWidth;
    ctx.font = getComputedStyle(name).font;
    const limit = nr.right - (cut ? ctx.measureText('…').width : 0);
    let shown = 0;
    const range = document.createRange();
    for (let i = 0; text && i < text.length; i++) {
      range.setStart(text, i);
      range.setEnd(text, i + 1);
      const b = range.getBoundingClientRect();
      if (b.right > limit + 0.5 || b.top < hr.top - 1 || b.bottom > hr.bottom + 1) break;
      shown++;
    }
    const metas = [...r.querySelectorAll('.meta, .needs-you, .status')].filter(drawn);
    const word = r.querySelector('.status .word');
    return {
      label: r.getAttribute('aria-label'),
      name: name.textContent,
      shown,
      nameLeft: Math.round(nr.left),
      nameOnFirstLine: nr.top >= hr.top - 1 && nr.bottom <= hr.bottom + 1,
      metaLeft: metas.length ? Math.round(Math.min(...metas.map((m) => m.getBoundingClientRect().left))) : undefined,
      meta: metas.map((m) => m.textContent.trim()),
      remoteShown: drawn(r.querySelector('.meta.remote')),
      remoteText: r.querySelector('.meta.remote')?.textContent.trim(),
      wordShown: !!word && getComputedStyle(word).display !== 'none' && word.getBoundingClientRect().width > 0,
    };
  });
}
