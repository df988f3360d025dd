// The workbench's quick input (command palette and quick picks), driven by keyboard the way
// that holds on a busy machine: F1 pressed again if the box did not take input, a row made
// active before Enter (a click can land while the list re-renders), and the pick confirmed by
// the quick input changing — an Enter the workbench dropped is pressed again, only once the
// workbench has gone still with the same row still active (so a slow pick is never taken twice).
import { SEL, say, sleep } from './common.mjs';
import { patiently, visible } from './patience.mjs';

const matches = (label, name) => (name instanceof RegExp ? name.test(label) : label === name);

/** Each row's label as shown (icons and indent aside), and which row is active. */
async function readRows(page) {
  // No quick input in the page (a command reloaded the window, e.g. Reload Window): nothing shown.
  // Without this, `evaluate` waited for one to appear, up to Playwright's default 30 s.
  const widget = page.locator('.quick-input-widget');
  if ((await widget.count()) === 0) return { shown: false, value: '', title: '', focused: false, rows: [] };
  return widget.evaluate(
    (w) => ({
      shown: getComputedStyle(w).display !== 'none',
      value: w.querySelector('input')?.value ?? '',
      title: w.querySelector('.quick-input-title')?.textContent ?? '',
      // Whether key presses reach it: a webview (a transcript tab) can take the focus as it loads.
      focused: w.contains(document.activeElement),
      rows: [...w.querySelectorAll('.quick-input-list .monaco-list-row')].map((r) => ({
        label: (r.querySelector('.label-name')?.textContent ?? '').trim(),
        focused: r.classList.contains('focused'),
      })),
    }),
    undefined,
    { timeout: 2_000 },
  );
}

/**
 * Gives the quick input the keyboard back when something else holds it (a webview loading in an
 * editor tab focuses itself; the quick input stays open, as `ignoreFocusOut` asks, but deaf).
 */
async function refocus(page, state) {
  if (!state.shown || state.focused) return;
  say('  the quick input had lost the keyboard focus; focusing it again');
  await page
    .locator(SEL.quickInput)
    .focus({ timeout: 2_000 })
    .catch(() => undefined);
}

/**
 * Opens the command palette with `>text` typed in it. On a loaded machine F1 can land while
 * the workbench is still busy and the box is not ready for input: press it again (≤ 3 times).
 */
export async function typeInPalette(page, text) {
  const box = page.locator(SEL.quickInput);
  for (let attempt = 1; ; attempt++) {
    try {
      await page.keyboard.press('F1');
      await visible(box, 'the command palette', 10_000);
      await box.fill(text, { timeout: 5_000 });
      return box;
    } catch (err) {
      if (attempt === 3) throw err;
      await page.keyboard.press('Escape').catch(() => undefined);
      await sleep(500);
    }
  }
}

/**
 * Picks the row of the open quick input whose label is `name` (a string: exactly; a RegExp:
 * matching), by keyboard, and waits until the pick is taken (the quick input closed or moved on).
 */
export async function pick(page, name) {
  let state;
  const where = () => `rows: ${JSON.stringify(state?.rows.map((r) => r.label))}`;
  await patiently(
    `a quick pick row named ${name}`,
    10_000,
    async () => {
      // A closed quick input keeps its last rows in the page: only a shown one counts.
      state = await readRows(page);
      return state.shown && state.rows.some((r) => matches(r.label, name));
    },
    {
      describe: where,
    },
  );
  const label = state.rows[state.rows.findIndex((r) => matches(r.label, name))].label;
  // Step the focus one key at a time, reading where it is after each and pressing the next key
  // only once the last one has shown (or plainly been dropped): a busy workbench can render the
  // rows before it focuses the first one, drop a key press, or show a press late — and pressing
  // on a stale reading overshoots and can swing past the row for ever.
  await patiently(
    `the quick pick row "${label}" to be active`,
    5_000,
    async () => {
      state = await readRows(page);
      const target = state.rows.findIndex((r) => r.label === label);
      const active = state.rows.findIndex((r) => r.focused);
      if (target >= 0 && active === target) return true;
      if (target < 0) return false;
      await refocus(page, state);
      await page.keyboard.press(active < 0 || active < target ? 'ArrowDown' : 'ArrowUp');
      const t0 = Date.now();
      while (Date.now() - t0 < 1_500) {
        await sleep(100);
        const now = await readRows(page).catch(() => undefined);
        if (now && now.rows.findIndex((r) => r.focused) !== active) break;
      }
      return false;
    },
    { describe: where, pollMs: 100 },
  );
  // What the list shows, not where the keyboard is (refocusing it is not a pick taken).
  const shownList = ({ focused, ...list }) => JSON.stringify(list);
  const before = shownList(state);
  for (let attempt = 1; ; attempt++) {
    await refocus(page, await readRows(page));
    await page.keyboard.press('Enter');
    try {
      await patiently(`the pick "${label}" to be taken`, 5_000, async () => {
        const now = await readRows(page).catch(() => ({ shown: false }));
        return !now.shown || shownList(now) !== before;
      });
      return;
    } catch (err) {
      // Still the same list with the same row active, and the workbench has gone still: the Enter was dropped.
      if (attempt === 3) throw err;
      say(`  the quick input did not take "${label}"; pressing Enter again`);
    }
  }
}

/** Runs a command from the palette (F1) by its full title, e.g. "Arbor: Set API Key". */
export async function command(page, title) {
  await typeInPalette(page, `>${title}`);
  await pick(page, title);
}
