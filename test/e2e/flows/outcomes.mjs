// Honest outcomes and the panel as a new user meets it (issue 8, points 8 and 9), in order:
//   01 open the panel: the empty panel lists the demo's prompts; the mode in force (sandbox,
//      approval) shows beside the input
//   02 "run the tests": a 'tester' child runs `npm test`, which children may not do (their
//      approval is never); its node reads "completed · 1 refused" and the settlement notice in
//      the root's chat says what was refused; the conversation is titled by its first message
//   03 "Arbor: Set Sandbox Mode" marks the current modes; choosing approval never for "This
//      session" changes the indicator and writes no .vscode/settings.json in the workspace
//   04 the indicator beside the input opens the same picker, now marking approval never
//   05 "Arbor: New Conversation" ("+") stores nothing: no new node until the first message,
//      which creates the conversation and titles it
//   06 a subagent's menu offers no Compact, a conversation's does; its raw event log opens wrapped
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { repoRoot } from '../../../scripts/e2e/paths.mjs';
import { SEL } from '../lib/flow.mjs';
import { slack } from '../lib/patience.mjs';

const require = createRequire(import.meta.url);
const { demoReply, DEMO_PROMPTS, DEMO_PROMPT_LABELS } = require(join(repoRoot, 'out', 'test', 'support', 'demo-script.js'));

const ROOT = 'run the tests';
const REFUSAL = 'Finished, but 1 action was refused: run_command `npm test` (approval: never).';

/** The demo's model, plus one scene: a child asked to run the tests tries `npm test`. */
function script(body) {
  const msgs = body.messages;
  const last = msgs[msgs.length - 1];
  const child = msgs.some((m) => m.role === 'user' && String(m.content ?? '').startsWith('[Arbor runtime] You are a subagent'));
  const task = String([...msgs].reverse().find((m) => m.role === 'user')?.content ?? '');
  if (child && task.startsWith('TESTS')) {
    if (last.role === 'tool') return { text: 'I could not run the tests: the command was refused.' };
    return { toolCalls: [{ name: 'run_command', arguments: { command: 'npm test', outsideSandbox: true } }] };
  }
  if (!child && last.role === 'user' && String(last.content ?? '') === ROOT) {
    return { toolCalls: [{ name: 'subagent', arguments: { prompt: 'TESTS: run the test suite and say what failed.', label: 'tester', mode: 'continuable' } }] };
  }
  return demoReply(body);
}

export const flow = {
  name: 'outcomes',
  model: (model) => model.setFallback(script),
  async run({ page, panel, chat, row, rowWith, rowIds, send, openPanel, contextMenu, command: runCommand, pick, step, until, visible, folder, say }) {
    const mode = panel.locator('.composer .mode');
    const settingsFile = join(folder, '.vscode', 'settings.json');
    // The sample workspace ships a settings file (the approval scene edits it): it must not change.
    const settingsText = () => (existsSync(settingsFile) ? readFileSync(settingsFile, 'utf8') : null);
    const settingsBefore = settingsText();
    const rows = page.locator(SEL.quickRow);
    /** A palette command, with the keyboard in the editor area (a click on the activity bar would switch views). */
    async function command(title) {
      await page.locator('.part.editor').click({ position: { x: 200, y: 200 }, timeout: slack(5_000) });
      await runCommand(title);
    }
    const rowTexts = async () => (await rows.allTextContents()).map((s) => s.replace(/\s+/g, ' ').trim());

    await step('empty-panel-lists-prompts', 60_000, async () => {
      await openPanel();
      await until('the example prompts in the empty panel', 15_000, async () => {
        const shown = (await panel.locator('.examples button').allTextContents()).map((s) => s.trim());
        return JSON.stringify(shown) === JSON.stringify(DEMO_PROMPT_LABELS) ? shown : false;
      });
      await until('the mode beside the input', 10_000, async () =>
        /workspace-write\s*·\s*approval: ask/.test((await mode.textContent({ timeout: slack(2_000) })) ?? ''),
      );
    });

    await step('refused-child-says-so', 60_000, async () => {
      await send(ROOT);
      await visible(row('tester'), "the 'tester' node", 20_000);
      await visible(rowWith('tester', 'settled, 1 refused'), "'tester' settled with 1 refused action", 25_000);
      const detail = (
        await row('tester')
          .locator('.refused')
          .textContent({ timeout: slack(15_000) })
      )?.trim();
      if (detail !== 'completed · 1 refused') throw new Error(`the tester's node says ${JSON.stringify(detail)}`);
      const colour = await row('tester')
        .locator('.refused')
        .evaluate((el) => getComputedStyle(el).color, undefined, { timeout: slack(15_000) });
      const plain = await row('tester')
        .locator('.meta')
        .first()
        .evaluate((el) => getComputedStyle(el).color, undefined, { timeout: slack(15_000) });
      if (colour === plain) throw new Error(`the refusal is not in a warning colour (${colour})`);
      const notice = chat.locator('article.msg.settled', { hasText: 'tester' });
      await visible(notice, 'the settlement notice in the root chat', 15_000);
      const text = ((await notice.textContent({ timeout: slack(15_000) })) ?? '').replace(/\s+/g, ' ');
      say(`  notice: ${text.slice(0, 200)}`);
      if (!text.includes('1 refused') || !text.includes(REFUSAL)) throw new Error(`the notice does not say what was refused: ${JSON.stringify(text)}`);
      // Titled by its first message (the root row's name).
      await visible(row(ROOT), `the conversation titled "${ROOT}"`, 5_000);
    });

    await step('picker-marks-current-and-sets-this-session', 40_000, async () => {
      await command('Arbor: Set Sandbox Mode');
      await until('the sandbox / approval picker', 10_000, async () => (await rowTexts()).some((t) => t.includes('workspace-write')));
      const listed = await rowTexts();
      say(`  picker: ${listed.join(' | ')}`);
      const current = listed.filter((t) => t.includes('current'));
      if (current.length !== 2 || !current.some((t) => t.includes('workspace-write')) || !current.some((t) => t.includes('approval: ask'))) {
        throw new Error(`the picker does not mark workspace-write and approval: ask as current: ${JSON.stringify(listed)}`);
      }
      await pick('approval: never');
      await until('the "apply to" choices', 10_000, async () => (await rowTexts()).some((t) => t.startsWith('This session')));
      const scopes = await rowTexts();
      say(`  scopes: ${scopes.join(' | ')}`);
      if (!scopes.some((t) => t.startsWith('All sessions (user setting)')) || !scopes.some((t) => t.startsWith('This workspace (.vscode/settings.json)'))) {
        throw new Error(`the scopes offered are ${JSON.stringify(scopes)}`);
      }
      await pick('This session');
      await until('the indicator to show approval never', 10_000, async () =>
        /approval: never/.test((await mode.textContent({ timeout: slack(2_000) })) ?? ''),
      );
      if (settingsText() !== settingsBefore) throw new Error(`"This session" wrote ${settingsFile}`);
    });

    await step('indicator-opens-picker-marking-never', 30_000, async () => {
      await mode.click({ timeout: slack(5_000) });
      await visible(rows.first(), 'the picker opened from the indicator', 10_000);
      const listed = await rowTexts();
      if (!listed.some((t) => t.includes('approval: never') && t.includes('current')))
        throw new Error(`approval never is not marked current: ${JSON.stringify(listed)}`);
      await page.keyboard.press('Escape');
      await rows.first().waitFor({ state: 'hidden', timeout: slack(5_000) });
      if (settingsText() !== settingsBefore) throw new Error(`${settingsFile} changed`);
    });

    await step('new-conversation-is-lazy', 40_000, async () => {
      const before = await rowIds();
      await command('Arbor: New Conversation');
      await until(
        'the chat to be empty with the example prompts',
        10_000,
        async () => (await panel.locator('.examples button').count()) === DEMO_PROMPTS.length,
      );
      await page.waitForTimeout(500);
      const after = await rowIds();
      if (after.length !== before.length) throw new Error(`"New Conversation" added a node before any message (${before.length} → ${after.length})`);
      await send('hello again');
      await visible(row('hello again'), 'the new conversation titled by its first message', 15_000);
      const roots = await panel.locator('[role="treeitem"][aria-level="1"]').count();
      if (roots !== 2) throw new Error(`expected 2 conversations, found ${roots}`);
    });

    await step('menus-and-wrapped-event-log', 40_000, async () => {
      const menuOf = async (target) => {
        await target.click({ button: 'right', timeout: slack(10_000) });
        await visible(page.locator(SEL.menuItem).first(), 'the context menu', 10_000);
        const items = (await page.locator(SEL.menuItem).allTextContents()).map((t) => t.trim()).filter(Boolean);
        await page.keyboard.press('Escape');
        await page.locator('.context-view .monaco-menu').waitFor({ state: 'hidden', timeout: slack(5_000) });
        return items;
      };
      const childMenu = await menuOf(row('tester'));
      say(`  tester's menu: ${childMenu.join(' | ')}`);
      if (childMenu.includes('Compact Conversation')) throw new Error('Compact is offered on a subagent');
      const rootMenu = await menuOf(row(ROOT));
      if (!rootMenu.includes('Compact Conversation')) throw new Error(`Compact is not offered on a conversation: ${rootMenu.join(' | ')}`);
      await contextMenu(row(ROOT), 'Open Raw Event Log');
      const editor = page.locator('.part.editor .monaco-editor').first();
      await visible(editor, 'the raw event log editor', 15_000);
      // Wrapped: the long JSON lines take more view lines than there are line numbers.
      const lines = await until('the event log to render wrapped', 10_000, async () => {
        const n = await editor.locator('.view-line').count();
        const numbers = await editor.locator('.line-numbers').count();
        return numbers > 0 && n > numbers ? { n, numbers } : false;
      });
      say(`  event log: ${lines.n} view lines for ${lines.numbers} log lines in view`);
    });
  },
};
