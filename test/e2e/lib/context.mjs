// The context a UI flow's run() gets: the panel's and the transcript tab's frames, and the
// actions the flows share (send, context menu, select a row, open the panel, reload, commands).
import { SEL, say, sleep } from './common.mjs';
import { anyArborFrame } from './frames.mjs';
import { PATIENCE, patiently, STALL_MS, until, visible } from './patience.mjs';
import { pick, command as runCommand } from './quick-input.mjs';

/** Locators and actions shared by the flows. */
/**
 * A Playwright action's timeout: its nominal time × PATIENCE. Playwright's own waits follow the
 * page (an action goes as soon as its element is actionable), so only a slow page uses the room.
 */
const act = (ms) => ms * PATIENCE;

export function makeContext({ page, model, server, folder, outDir }) {
  const panel = page.frameLocator(SEL.panelFrame).frameLocator('#active-frame');
  const tab = page.frameLocator(SEL.tabFrame).frameLocator('#active-frame');
  const input = panel.locator('.composer vscode-textarea textarea');
  const icon = page.locator(SEL.activityIcon);
  /** How far the panel has come, in order; each stage reached is progress while waiting for it. */
  const PANEL_STAGES = [
    ['the workbench', page.locator(SEL.workbench)],
    ['the Arbor icon (the extension host has registered Arbor)', icon],
    ['the Arbor view container open', page.locator(SEL.activityIconChecked)],
    ['a webview frame of Arbor', page.locator(anyArborFrame)],
    ["the panel's page loaded (a frame holds data-view=panel)", page.locator(SEL.panelFrame)],
    ['the chat input', input],
    ['the Sessions (tree) pane', panel.locator('[aria-label="Sessions"]')],
  ];
  const shown = (loc, attached) => (attached ? loc.count().then((n) => n > 0) : loc.first().isVisible());
  async function panelStage() {
    let i = 0;
    // Frames are only counted: an iframe's own box says nothing about its content.
    while (i < PANEL_STAGES.length && (await shown(PANEL_STAGES[i][1], i === 3 || i === 4).catch(() => false))) i++;
    return i;
  }
  const chat = panel.locator('.chat-pane');
  const row = (name) => panel.locator(`[role="treeitem"][aria-label^="${name},"]`);
  const rowWith = (name, status) => panel.locator(`[role="treeitem"][aria-label^="${name}, ${status}"]`);
  const rowIds = () => panel.locator('[role="treeitem"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-row-id')));

  /** Types into the panel's chat input and sends with Enter (or the Send button). */
  async function send(text, { button = false } = {}) {
    await visible(input, 'the chat input', 10_000);
    await input.click({ timeout: act(10_000) });
    await input.fill(text, { timeout: act(10_000) });
    if (button) await panel.locator('.composer vscode-button', { hasText: 'Send' }).click({ timeout: act(10_000) });
    else await input.press('Enter', { timeout: act(10_000) });
    // Sent: the input was cleared by the webview.
    await until(`the input to be cleared after sending ${JSON.stringify(text)}`, 10_000, async () => (await input.inputValue({ timeout: 2_000 })) === '');
  }

  /** Right-clicks `target` (in a webview) and picks `label` from VS Code's context menu. */
  async function contextMenu(target, label) {
    await target.scrollIntoViewIfNeeded({ timeout: act(10_000) });
    await target.click({ button: 'right', timeout: act(10_000) });
    const item = page.locator(SEL.menuItem, { hasText: new RegExp(`^${label}$`) });
    await visible(item, `context-menu item "${label}"`, 10_000);
    const items = await page.locator(SEL.menuItem).allTextContents();
    say(
      `  context menu: ${items
        .map((s) => s.trim())
        .filter(Boolean)
        .join(' | ')}`,
    );
    // A click that lands while the menu is still settling can be swallowed (the menu stays
    // open, nothing runs). Point at the item first; click again only while the menu is
    // still open, so a command never runs twice.
    const menu = page.locator('.context-view .monaco-menu');
    for (let attempt = 1; ; attempt++) {
      await item.hover({ timeout: act(5_000) });
      await sleep(150);
      await item.click({ timeout: act(5_000) });
      try {
        await patiently('the context menu to close', 2_000, () => menu.isHidden());
        break;
      } catch {
        if (attempt === 3) throw new Error(`the context menu stayed open after clicking "${label}" ${attempt} times`);
        say(`  the menu is still open after clicking "${label}"; clicking again`);
      }
    }
  }

  /** The chat follows the newest message: `locator` must come into the transcript's scrolled viewport. */
  async function inView(locator, what, timeoutMs = 5_000) {
    await visible(locator, what, timeoutMs);
    let where = '';
    try {
      await until(`${what} to be scrolled into the chat's view`, timeoutMs, async () => {
        const v = await locator.evaluate((el) => {
          const s = el.closest('.scroller');
          const r = el.getBoundingClientRect();
          const q = s.getBoundingClientRect();
          return r.top < q.bottom && r.bottom > q.top
            ? true
            : `scrollTop ${s.scrollTop}, scrollHeight ${s.scrollHeight}, clientHeight ${s.clientHeight}, element at ${Math.round(r.top - q.top)}px`;
        });
        if (v !== true) where = v;
        return v === true;
      });
    } catch (err) {
      throw new Error(`${err.message}: ${where}`);
    }
  }

  /** Clicks a tree row and waits until the chat shows that session. */
  async function selectRow(name) {
    await row(name)
      .first()
      .click({ timeout: act(10_000) });
    await until(
      `the chat header to show "${name}"`,
      10_000,
      async () => (await chat.locator('.head .name').first().textContent({ timeout: 2_000 }))?.trim() === name,
    );
  }

  /**
   * Opens the Arbor view (if the workbench has not restored it open) and waits, stage by stage,
   * until the panel shows its chat input and tree. Each stage reached is progress: the wait goes
   * on as long as the workbench moves (patience.mjs) and, when it gives up, names the stage it
   * was stuck at.
   */
  async function openPanel() {
    let closedSince;
    let lastClick = 0;
    let reached = '';
    await patiently(
      'the Arbor panel to be ready',
      45_000,
      async () => {
        const stage = await panelStage();
        reached = PANEL_STAGES[stage - 1]?.[0] ?? 'nothing yet';
        if (stage === PANEL_STAGES.length) return true;
        // The icon is there and its container closed: open it, unless the workbench is still
        // restoring it (closed for a second first) or a click is on its way (5 s apart). A
        // click on an open container would close it, so it is never clicked blindly.
        if (stage === 2) {
          closedSince ??= Date.now();
          if (Date.now() - closedSince > 1_000 && Date.now() - lastClick > 5_000) {
            lastClick = Date.now();
            if (!(await page.locator(SEL.activityIconChecked).isVisible())) {
              say('  the Arbor view is closed; clicking its icon');
              await icon.click({ timeout: 10_000 }).catch((err) => say(`  the click on the Arbor icon failed: ${err.message.split('\n')[0]}`));
            }
          }
        } else closedSince = undefined;
        return false;
      },
      {
        // Stage, frames and the page's size: while they change the wait goes on (no cap).
        signature: async () => [reached, await page.locator(anyArborFrame).count(), await page.evaluate(() => document.getElementsByTagName('*').length)],
        stallMs: STALL_MS,
        describe: () => `the panel had come as far as: ${reached}`,
      },
    );
  }

  /**
   * Reloads the window and waits for the Arbor panel to be back. `trigger` reloads it the way
   * the flow's user does (e.g. a notification's Reload Window button); by default it is the
   * palette's Developer: Reload Window. Not `page.reload()`: in the browser the workbench
   * saves its state (the open editors among it) on an unload it cannot wait for, so on a busy
   * machine the last tab opened can be lost; Reload Window saves first, then reloads.
   */
  async function reload(trigger = () => runCommand(page, 'Developer: Reload Window')) {
    await sleep(500); // let the views save their state (the webview coalesces writes for 150 ms)
    await Promise.all([page.waitForEvent('domcontentloaded', { timeout: 60_000 }), trigger()]);
    await openPanel();
  }

  /** Runs a command from the palette (F1) by its full title, e.g. "Arbor: Set API Key". */
  const command = (title) => runCommand(page, title);

  return {
    page,
    model,
    server,
    folder,
    outDir,
    panel,
    tab,
    input,
    chat,
    row,
    rowWith,
    rowIds,
    send,
    contextMenu,
    inView,
    selectRow,
    openPanel,
    command,
    pick: (name) => pick(page, name),
    reload,
    until,
    visible,
    sleep,
    say,
    SEL,
  };
}
