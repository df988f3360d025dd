// Approvals you cannot miss and can decide on (issue 8 point 5), in the real VS Code:
//   01 open the Arbor panel
//   02 "run the tests": the root asks to run `npm test`: the card shows the command, the
//      Arbor activity-bar icon carries a badge, the root's tree row a "needs you" mark
//   03 "Allow for this conversation": the command runs; the grant is listed in the chat;
//      the badge is gone
//   04 "run the tests" again: it runs without asking (the grant covers `npm test`)
//   05 "edit the settings" while the Explorer is shown: a notification says what is asked
//      (read in the notification center: toasts are hidden in smoke-test mode); the badge
//      counts it; "Show in Arbor" reveals the panel
//   06 the card shows the diff against .vscode/settings.json; deny with a reason: the
//      model's next request carries the reason in the tool message; the file is unchanged
//   07 Revoke the grant: "run the tests" asks again

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { repoRoot } from '../../../scripts/e2e/paths.mjs';
import { slack } from '../lib/patience.mjs';

const require = createRequire(import.meta.url);
const { demoReply } = require(join(repoRoot, 'out', 'test', 'support', 'demo-script.js'));

const REASON = 'keep two-space tabs, the style guide says so';

export const flow = {
  name: 'approvals',
  async run({ page, panel, chat, row, send, openPanel, command, model, folder, step, until, visible, sleep, say, SEL }) {
    // From step 05 on the view has been hidden and shown again: `panel` and `chat` find it by its content.
    const ROOT = 'run the tests';
    const badge = page.locator('.activitybar .action-item:has(a.action-label[aria-label^="Arbor"]) .badge .badge-content');
    const cards = chat.locator('.approval');
    const badgeText = async () =>
      (await badge.count()) > 0 && (await badge.first().isVisible()) ? ((await badge.first().textContent({ timeout: slack(2_000) })) ?? '').trim() : '';
    const toolMessages = (n) => model.requests.slice(n).flatMap((r) => r.body.messages.filter((m) => m.role === 'tool').map((m) => String(m.content)));

    await step('open-panel', 60_000, async () => {
      await openPanel();
      await until('the panel to be ready (snapshot received)', 15_000, async () =>
        (await panel.locator('.tree-body').textContent({ timeout: slack(2_000) }))?.includes('No conversations yet'),
      );
    });

    await step('command-asks-with-badge-and-mark', 40_000, async () => {
      await send(ROOT);
      const card = await visible(cards.first(), 'the approval card for run_command', 20_000);
      const text = (await card.textContent({ timeout: slack(5_000) })) ?? '';
      if (!text.includes('$ npm test')) throw new Error(`the card does not show the command: ${JSON.stringify(text)}`);
      await visible(card.locator('.allow-conversation'), 'the "Allow for this conversation" button', 5_000);
      const scope = (await card.locator('.scope').textContent({ timeout: slack(5_000) })) ?? '';
      if (!/run_command[\s\S]*npm test/.test(scope)) throw new Error(`the card does not say what the grant covers: ${JSON.stringify(scope)}`);
      await until('the badge "1" on the Arbor activity-bar icon', 10_000, async () => (await badgeText()) === '1');
      await visible(row(ROOT).locator('.needs-you'), 'the "needs you" mark on the asking row', 5_000);
    });

    await step('allow-for-this-conversation', 40_000, async () => {
      await cards
        .first()
        .locator('.allow-conversation')
        .click({ timeout: slack(10_000) });
      await visible(chat.locator('article.msg.assistant', { hasText: 'The tests ran' }), 'the answer after the command ran', 30_000);
      await until('no approval card left', 10_000, async () => (await cards.count()) === 0);
      await until('the badge to clear', 10_000, async () => (await badgeText()) === '');
      const grants = await visible(chat.locator('.grants'), 'the list of what is allowed for this conversation', 10_000);
      const listed = (await grants.textContent({ timeout: slack(5_000) })) ?? '';
      if (!/run_command[\s\S]*npm test/.test(listed)) throw new Error(`the grant list says ${JSON.stringify(listed)}`);
      if ((await row(ROOT).locator('.needs-you').count()) !== 0) throw new Error('the tree row still shows the "needs you" mark');
    });

    await step('second-matching-request-does-not-ask', 40_000, async () => {
      const seen = await panel.locator('body').evaluate(() => {
        const w = /** @type {any} */ (window);
        w.__arborCards = 0;
        w.__arborCardMo?.disconnect();
        w.__arborCardMo = new MutationObserver(() => {
          w.__arborCards = Math.max(w.__arborCards, document.querySelectorAll('.approval').length);
        });
        w.__arborCardMo.observe(document.body, { subtree: true, childList: true });
        return true;
      });
      if (!seen) throw new Error('could not watch the chat');
      const before = model.requests.length;
      const answers = chat.locator('article.msg.assistant', { hasText: 'The tests ran' });
      const n0 = await answers.count();
      await send('run the tests again');
      await until('the second run to finish', 30_000, async () => (await answers.count()) > n0);
      const shown = await panel.locator('body').evaluate(() => /** @type {any} */ (window).__arborCards);
      if (shown !== 0) throw new Error('an approval card appeared for a command the grant covers');
      if (!toolMessages(before).some((c) => c.startsWith('Exit code: 0'))) throw new Error(`the command did not run: ${JSON.stringify(toolMessages(before))}`);
    });

    await step('notification-when-hidden', 60_000, async () => {
      // Slow the model's next answer so the panel is hidden before the request arrives.
      model.enqueue((body) => ({ ...demoReply(body), delayMs: 4_000 }));
      await send('edit the settings');
      await page.locator('.activitybar a.action-label[aria-label^="Explorer"]').click({ timeout: slack(10_000) });
      await until('the Arbor view to be hidden (another view container shown)', 10_000, async () => !(await page.locator(SEL.activityIconChecked).isVisible()));
      await until('the badge "1" on the Arbor icon while the Explorer is shown', 20_000, async () => (await badgeText()) === '1');
      await sleep(500);
      await command('Notifications: Show Notifications');
      const item = page.locator('.notifications-center .notification-list-item', { hasText: 'asks for approval: write_file' });
      await visible(item, 'the approval notification in the notification center', 15_000);
      const message = (await item.locator('.notification-list-item-message').textContent({ timeout: slack(5_000) })) ?? '';
      say(`  notification: ${message}`);
      if (!message.includes('.vscode/settings.json')) throw new Error(`the notification does not say what is asked: ${JSON.stringify(message)}`);
      await item.locator('.monaco-button', { hasText: 'Show in Arbor' }).click({ timeout: slack(10_000) });
      await until('the Arbor view to be shown again', 10_000, async () => page.locator(SEL.activityIconChecked).isVisible());
      await visible(cards.first(), 'the approval card after "Show in Arbor"', 20_000);
    });

    await step('diff-card-deny-with-reason', 40_000, async () => {
      const card = cards.first();
      const del = (await card.locator('.preview .pl.del').allTextContents()).join('\n');
      const add = (await card.locator('.preview .pl.add').allTextContents()).join('\n');
      if (!del.includes('"editor.tabSize": 2') || !add.includes('"editor.tabSize": 4'))
        throw new Error(`the diff shows -${JSON.stringify(del)} +${JSON.stringify(add)}`);
      const before = model.requests.length;
      await card.locator('.deny-reason').fill(REASON, { timeout: slack(5_000) });
      await card.locator('.deny-button').click({ timeout: slack(5_000) });
      await visible(chat.locator('article.msg.assistant', { hasText: 'Understood, I left it as it is' }), "the model's answer to the denial", 20_000);
      const seen = toolMessages(before);
      if (!seen.some((c) => c.includes(`who said: "${REASON}"`)))
        throw new Error(`the model's request has no tool message with the reason: ${JSON.stringify(seen)}`);
      const settings = readFileSync(join(folder, '.vscode', 'settings.json'), 'utf8');
      if (!settings.includes('"editor.tabSize": 2')) throw new Error(`the settings file changed: ${settings}`);
      await until('the badge to clear', 10_000, async () => (await badgeText()) === '');
    });

    await step('revoke-asks-again', 40_000, async () => {
      await chat.locator('.grants .grant button', { hasText: 'Revoke' }).click({ timeout: slack(10_000) });
      await until('the grant list to empty', 10_000, async () => (await chat.locator('.grants').count()) === 0);
      await send('run the tests once more');
      const card = await visible(cards.first(), 'the approval card again after the revoke', 20_000);
      await card.locator('.deny-button').click({ timeout: slack(5_000) });
      await visible(chat.locator('article.msg.assistant', { hasText: 'Understood, I did not do it' }), 'the answer to the plain denial', 20_000);
    });
  },
};
