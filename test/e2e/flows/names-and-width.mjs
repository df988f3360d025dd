// Issue 8, points 6 and 7: the panel as a new user meets it.
//   01 open the panel, start a conversation, "survey the workspace": a 'surveyor' child settles
//   02 fork the surveyor twice from the palette ("Arbor: Fork Conversation"): the quick pick
//      lists sessions by name, in tree order, indented, with status; the forks are named
//      "Fork of surveyor" and "Fork of surveyor (2)"; the notice names both sides
//   03 transcript tabs are titled by name ("surveyor", "Fork of surveyor (2)")
//   04 the delete dialog names the session and counts what goes with it (cancelled)
//   05 export proposes <workspace>/surveyor.jsonl (cancelled)
//   06 "start a long task", interrupt it: an 'interrupted' badge for the contrast check
//   07 side bar at 300 px and 220 px: every name is whole, or else all metadata is gone
//   08 badge contrast ≥ 4.5:1 from computed styles in Light Modern, Dark Modern, High Contrast
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SEL } from '../lib/flow.mjs';
import { slack } from '../lib/patience.mjs';
import { sideBarWidth } from '../lib/side-bar.mjs';

const THEMES = [
  // The picker's labels (the settings ids are "Default Light Modern", …, the labels are not).
  ['Light Modern', 'vscode-light'],
  ['Dark Modern', 'vscode-dark'],
  ['Dark High Contrast', 'vscode-high-contrast'],
];
const STATUSES = ['running', 'waiting', 'settled', 'failed', 'interrupted', 'idle'];

export const flow = {
  name: 'names-and-width',
  async run({ page, panel, folder, outDir, row, rowWith, send, contextMenu, openPanel, selectRow, command, pick, step, until, visible, sleep, say }) {
    const ROOT = 'hello Arbor';
    const ids = {};
    const quickRows = page.locator(SEL.quickRow);
    /** Label and description of each quick pick row, as shown. */
    const readPicks = () =>
      quickRows.evaluateAll((els) =>
        els.map((el) => ({
          label: el.querySelector('.label-name')?.textContent ?? '',
          description: el.querySelector('.label-description')?.textContent ?? '',
          indent: Math.round(el.querySelector('.label-name .codicon')?.getBoundingClientRect().left ?? 0),
          top: Math.round(el.getBoundingClientRect().top),
        })),
      );
    /**
     * Runs a palette command with the keyboard in the workbench: the active editor tab, or the
     * empty editor area, is a safe place to click (a click on the activity bar could land on
     * another view's icon and hide the Arbor panel).
     */
    async function palette(title) {
      const activeTab = page.locator(`${SEL.editorTab}.active`);
      // Best effort: on a loaded machine the click can be slow to be acknowledged; F1 still works.
      if ((await activeTab.count()) > 0)
        await activeTab
          .first()
          .click({ timeout: slack(15_000) })
          .catch(() => undefined);
      else
        await page
          .locator('.part.editor')
          .click({ position: { x: 30, y: 300 }, timeout: slack(15_000) })
          .catch(() => undefined);
      await command(title);
    }
    const tabNamed = (name) => page.locator(`${SEL.editorTab} .label-name`, { hasText: new RegExp(`^${name.replace(/[()]/g, '\\$&')}$`) });

    // ── 1 ────────────────────────────────────────────────────────────────────
    await step('child-settles', 150_000, async () => {
      await openPanel();
      await send(ROOT);
      await visible(row(ROOT), `the root "${ROOT}" in the tree`, 20_000);
      await send('survey the workspace');
      await visible(rowWith('surveyor', 'settled'), "'surveyor' settled", 30_000);
      ids.root = await row(ROOT).getAttribute('data-row-id', { timeout: slack(5_000) });
      ids.surveyor = await row('surveyor').getAttribute('data-row-id', { timeout: slack(5_000) });
    });

    // ── 2 ────────────────────────────────────────────────────────────────────
    await step('fork-twice-from-palette', 60_000, async () => {
      await palette('Arbor: Fork Conversation');
      const picks = await until('the session quick pick', 10_000, async () => {
        const rows = await readPicks();
        return rows.some((r) => r.label.trim() === ROOT) ? rows : undefined;
      });
      say(`  quick pick: ${picks.map((p) => `${JSON.stringify(p.label)} [${p.description}] @${p.indent}`).join(' | ')}`);
      const root = picks.find((p) => p.label.trim() === ROOT);
      const child = picks.find((p) => p.label.trim() === 'surveyor');
      if (!root || !child) throw new Error(`the quick pick does not name "${ROOT}" and "surveyor": ${JSON.stringify(picks)}`);
      if (!/^idle$/.test(root.description.trim())) throw new Error(`the root's description is ${JSON.stringify(root.description)}, expected its status "idle"`);
      if (child.description.trim() !== `settled · subagent of ${ROOT}`) throw new Error(`surveyor's description is ${JSON.stringify(child.description)}`);
      if (!(child.indent > root.indent) || !(child.top > root.top))
        throw new Error(`surveyor is not indented under its parent (x ${child.indent} vs ${root.indent})`);
      for (const p of picks)
        if (p.label.includes(ids.surveyor) || p.description.includes(ids.root)) throw new Error(`a quick pick row shows an id: ${JSON.stringify(p)}`);
      await pick('surveyor');
      await visible(row('Fork of surveyor'), 'the fork "Fork of surveyor" in the tree', 15_000);
      await palette('Arbor: Fork Conversation');
      await pick('surveyor');
      await visible(row('Fork of surveyor (2)'), 'the second fork "Fork of surveyor (2)" in the tree', 15_000);
      ids.fork2 = await row('Fork of surveyor (2)').getAttribute('data-row-id', { timeout: slack(5_000) });
      // The notices (toasts are hidden in smoke-test mode: read the notification center).
      await palette('Notifications: Show Notifications');
      const notice = page.locator('.notifications-center .notification-list-item-message', { hasText: 'Fork of surveyor (2)' });
      const text = (await (await visible(notice, 'the fork notice in the notification center', 10_000)).textContent({ timeout: slack(5_000) })) ?? '';
      say(`  notice: ${text}`);
      if (text.trim() !== 'Arbor: forked “surveyor” into “Fork of surveyor (2)”.') throw new Error(`the fork notice reads ${JSON.stringify(text)}`);
      await page.keyboard.press('Escape');
    });

    // ── 3 ────────────────────────────────────────────────────────────────────
    await step('tab-titles-are-names', 40_000, async () => {
      await contextMenu(row('surveyor'), 'Open Transcript');
      await visible(tabNamed('surveyor'), 'the editor tab titled "surveyor"', 15_000);
      await contextMenu(row('Fork of surveyor (2)'), 'Open Transcript');
      await visible(tabNamed('Fork of surveyor (2)'), 'the editor tab titled "Fork of surveyor (2)"', 15_000);
      const titles = await page.locator(`${SEL.editorTab} .label-name`).allTextContents();
      say(`  tabs: ${titles.join(' | ')}`);
      if (titles.some((t) => t.includes(ids.root))) throw new Error(`a tab title shows an id: ${titles.join(' | ')}`);
    });

    // ── 4 ────────────────────────────────────────────────────────────────────
    await step('delete-dialog-names', 30_000, async () => {
      await palette('Arbor: Delete Session');
      await pick(ROOT);
      const dialog = await visible(page.locator('.monaco-dialog-box'), 'the delete dialog', 20_000);
      const message = ((await dialog.locator('.dialog-message-text').textContent({ timeout: slack(5_000) })) ?? '').trim();
      const detail = (
        (await dialog
          .locator('.dialog-message-detail')
          .textContent({ timeout: slack(5_000) })
          .catch(() => '')) ?? ''
      ).trim();
      say(`  dialog: ${message} / ${detail}`);
      const want = `Delete “${ROOT}” and the 3 sessions under it (subagents and forks)? This cannot be undone.`;
      if (message !== want) throw new Error(`the delete dialog says ${JSON.stringify(message)}, expected ${JSON.stringify(want)}`);
      if (!detail.includes(ids.root)) throw new Error(`the dialog's detail does not give the id for reference: ${JSON.stringify(detail)}`);
      await dialog.locator('.monaco-button', { hasText: 'Cancel' }).click({ timeout: slack(5_000) });
      await page.locator('.monaco-dialog-box').waitFor({ state: 'hidden', timeout: slack(5_000) });
      await visible(row(ROOT), 'the root still in the tree after Cancel', 5_000);
    });

    // ── 5 ────────────────────────────────────────────────────────────────────
    await step('export-proposes-workspace-file', 30_000, async () => {
      await palette('Arbor: Export Session as JSON Lines');
      await pick('surveyor');
      // code-server's save dialog is VS Code's own (a quick input holding the path).
      const box = page.locator(SEL.quickInput);
      const value = await until('the save dialog with a proposed path', 10_000, async () => {
        const v = await box.inputValue({ timeout: slack(2_000) });
        return v.endsWith('.jsonl') ? v : undefined;
      });
      say(`  export proposes ${value}`);
      if (value !== join(folder, 'surveyor.jsonl'))
        throw new Error(`export proposes ${JSON.stringify(value)}, expected ${JSON.stringify(join(folder, 'surveyor.jsonl'))}`);
      await page.keyboard.press('Escape');
    });

    // ── 6 ────────────────────────────────────────────────────────────────────
    await step('interrupted-child', 40_000, async () => {
      await selectRow(ROOT);
      await send('start a long task');
      await visible(rowWith('long-task', 'running'), "'long-task' running", 20_000);
      await sleep(500);
      await contextMenu(row('long-task'), 'Interrupt Agent');
      await visible(rowWith('long-task', 'interrupted'), "'long-task' interrupted", 15_000);
      await selectRow(ROOT);
    });

    // ── 7 ────────────────────────────────────────────────────────────────────
    /** Per row: is the name whole, which metadata is visible, is the status word shown. */
    const measureRows = () =>
      panel.locator('[role="treeitem"]').evaluateAll((rows) =>
        rows.map((r) => {
          const head = r.querySelector('.head');
          const name = r.querySelector('.name');
          const hr = head.getBoundingClientRect();
          const shown = (el) => {
            if (!el || getComputedStyle(el).display === 'none') return false;
            const b = el.getBoundingClientRect();
            return b.width > 0 && b.top >= hr.top - 1 && b.bottom <= hr.bottom + 1 && b.right <= hr.right + 1;
          };
          const word = r.querySelector('.status .word');
          return {
            name: name.textContent,
            truncated: name.scrollWidth > name.clientWidth,
            metaShown: [...r.querySelectorAll('.meta')].filter(shown).map((m) => m.textContent),
            metaCount: r.querySelectorAll('.meta').length,
            wordShown: !!word && getComputedStyle(word).display !== 'none',
            rowWidth: Math.round(r.getBoundingClientRect().width),
          };
        }),
      );
    const widths = {};
    for (const width of [300, 220]) {
      await step(`side-bar-${width}px`, 30_000, async () => {
        await sideBarWidth(page, width, sleep);
        await sleep(400);
        const rows = await measureRows();
        widths[width] = rows;
        say(
          `  ${width} px: ${rows.map((r) => `${r.name}${r.truncated ? ' (TRUNCATED)' : ''} meta[${r.metaShown.join(',')}] word:${r.wordShown}`).join(' | ')}`,
        );
        if (rows.length < 5) throw new Error(`expected at least 5 rows, saw ${rows.length}`);
        for (const r of rows) {
          // The name is the last thing truncated: a cut name means no metadata and no status word is left.
          if (r.truncated && (r.metaShown.length > 0 || r.wordShown))
            throw new Error(`at ${width} px "${r.name}" is truncated while ${JSON.stringify(r)} still shows metadata`);
        }
        if (width === 300) {
          const cut = rows.filter((r) => r.truncated);
          if (cut.length) throw new Error(`at 300 px these names are truncated: ${cut.map((r) => r.name).join(', ')}`);
        }
        if (width === 220 && rows.every((r) => r.metaShown.length === r.metaCount))
          throw new Error('at 220 px no row gave up any metadata (the check saw nothing to drop)');
        await page.screenshot({ path: join(outDir, `tree-${width}px.png`), clip: await page.locator('.part.sidebar').boundingBox() });
      });
    }
    await step('names-whole-at-220px', 5_000, async () => {
      const cut = widths[220].filter((r) => r.truncated);
      // At 220 px a long name three levels deep may still be cut (after everything else gave way); the names above must stay whole.
      say(`  names cut at 220 px: ${cut.map((r) => r.name).join(', ') || 'none'}`);
      for (const name of [ROOT, 'surveyor', 'long-task']) {
        if (cut.some((r) => r.name === name)) throw new Error(`"${name}" is truncated at 220 px`);
      }
    });

    // ── 8 ────────────────────────────────────────────────────────────────────
    await sideBarWidth(page, 300, sleep);
    const report = [];
    for (const [theme, bodyClass] of THEMES) {
      await step(`contrast-${bodyClass}`, 40_000, async () => {
        // Through the theme picker, as a user would (it writes workbench.colorTheme).
        await palette('Preferences: Color Theme');
        const box = page.locator(SEL.quickInput);
        await until('the theme picker', 10_000, async () =>
          (await box.getAttribute('placeholder', { timeout: slack(1_000) }))?.toLowerCase().includes('theme'),
        );
        await box.fill(theme, { timeout: slack(5_000) });
        await pick(theme);
        await until(`the webview to be in ${theme}`, 20_000, async () => panel.locator(`body.${bodyClass}`).count());
        await sleep(500);
        const measured = await panel.locator('body').evaluate(contrastProbe, STATUSES);
        for (const m of measured) report.push(`${theme} ${m.where} ${m.status}: ${m.ratio.toFixed(2)} (${m.fg} on ${m.bg})`);
        say(`  ${theme}: ${measured.map((m) => `${m.where}/${m.status} ${m.ratio.toFixed(2)}`).join(', ')}`);
        const low = measured.filter((m) => !(m.ratio >= 4.5));
        if (low.length)
          throw new Error(
            `badge contrast under 4.5:1 in ${theme}: ${low.map((m) => `${m.where} ${m.status} ${m.ratio.toFixed(2)} (${m.fg} on ${m.bg})`).join('; ')}`,
          );
        await page.screenshot({ path: join(outDir, `tree-300px-${bodyClass}.png`), clip: await page.locator('.part.sidebar').boundingBox() });
      });
    }
    writeFileSync(join(outDir, 'contrast.txt'), `${report.join('\n')}\n`);
  },
};

/**
 * Runs in the webview: for every status, a badge of that status (the real component's
 * element, cloned with the status class swapped) on an unselected row and on the selected
 * row; its computed colour against the first opaque background behind it, by WCAG 2.
 */
function contrastProbe(_body, statuses) {
  const parse = (c) => {
    const probe = document.createElement('span');
    probe.style.color = c;
    document.body.append(probe);
    // Let the engine resolve any colour syntax (color-mix, color(srgb …)) to rgb(a) on a canvas.
    const ctx = document.createElement('canvas').getContext('2d', { willReadFrequently: true });
    ctx.fillStyle = '#000';
    ctx.fillStyle = getComputedStyle(probe).color;
    ctx.fillRect(0, 0, 1, 1);
    const [r, g, b, a] = ctx.getImageData(0, 0, 1, 1).data;
    probe.remove();
    return { r, g, b, a: a / 255 };
  };
  const over = (top, under) => ({
    r: top.r * top.a + under.r * (1 - top.a),
    g: top.g * top.a + under.g * (1 - top.a),
    b: top.b * top.a + under.b * (1 - top.a),
    a: 1,
  });
  const lum = ({ r, g, b }) => {
    const f = (v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const hex = ({ r, g, b }) => `#${[r, g, b].map((v) => Math.round(v).toString(16).padStart(2, '0')).join('')}`;
  /** The background actually painted behind `el`: translucent layers composed over the page's. */
  const backgroundOf = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c.a > 0) layers.push(c);
      if (c.a === 1) break;
    }
    let base =
      layers.length && layers[layers.length - 1].a === 1
        ? layers.pop()
        : parse(getComputedStyle(document.documentElement).getPropertyValue('--vscode-sideBar-background').trim() || '#000');
    for (let i = layers.length - 1; i >= 0; i--) base = over(layers[i], base);
    return base;
  };
  const out = [];
  const rows = [...document.querySelectorAll('[role="treeitem"]')];
  const plain = rows.find((r) => r.getAttribute('aria-selected') !== 'true' && !r.matches(':hover'));
  const selected = rows.find((r) => r.getAttribute('aria-selected') === 'true');
  for (const [where, row] of [
    ['row', plain],
    ['selected', selected],
  ]) {
    if (!row) throw new Error(`no ${where} row to measure`);
    const badge = row.querySelector('.status');
    for (const status of statuses) {
      const clone = badge.cloneNode(true);
      for (const s of statuses) clone.classList.remove(s);
      clone.classList.add(status);
      badge.after(clone);
      const bg = backgroundOf(clone);
      const fg = over(parse(getComputedStyle(clone).color), bg);
      const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
      out.push({ where, status, ratio: (hi + 0.05) / (lo + 0.05), fg: hex(fg), bg: hex(bg) });
      clone.remove();
    }
  }
  return out;
}
