// What a user meets when an agent is busy (issue 8, points 3 and 4), in the real VS Code:
//   01 open the panel
//   02 "start a long task": the 'long-task' child streams slowly; selecting it mid-stream shows
//      everything it has said so far at once (the partial reply is part of the snapshot)
//   03 "Open Transcript" on the still-streaming child: the tab shows the text so far at once
//   04 a message sent to the busy root shows as Queued; Cancel removes it and it never runs
//   05 a message queued behind a turn that is then stopped shows as Waiting (Cancel / Send
//      now, "runs first"); Send now runs it
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { repoRoot } from '../../../scripts/e2e/paths.mjs';
import { slack } from '../lib/patience.mjs';

const require = createRequire(import.meta.url);
const { demoReply } = require(join(repoRoot, 'out', 'test', 'support', 'demo-script.js'));

const SENTENCE = 'I am working through a long analysis, one careful step at a time. ';
const BUSY = 'Busy with the root task, streaming slowly so messages queue behind it. ';

/** The demo's model, plus a slow root reply for messages starting with BUSY. */
function reply(body) {
  const msgs = body.messages;
  const last = msgs[msgs.length - 1];
  if (last.role === 'user' && String(last.content ?? '').startsWith('BUSY')) return { text: BUSY.repeat(8), chunkSize: 4, chunkDelayMs: 40 };
  return demoReply(body);
}

export const flow = {
  name: 'stream-and-queue',
  model: (model) => model.setFallback(reply),
  async run({ page, panel, tab, chat, openPanel, row, rowWith, send, contextMenu, selectRow, step, until, visible, sleep, say, model }) {
    const ROOT = 'start a long task';
    const live = chat.locator('article.live');
    const sent = () => model.requests.flatMap((r) => r.body.messages.filter((m) => m.role === 'user').map((m) => String(m.content ?? '')));

    await step('open-panel', 120_000, async () => {
      await openPanel();
      await until('the panel to be ready (snapshot received)', 60_000, async () =>
        (await panel.locator('.tree-body').textContent({ timeout: slack(2_000) }))?.includes('No conversations yet'),
      );
    });

    // The text of a live bubble, without its header ("long-task writing…").
    const liveText = (loc) => loc.evaluate((el) => [...el.querySelectorAll('.md')].map((m) => m.textContent ?? '').join(''));

    await step('select-mid-stream-shows-partial', 60_000, async () => {
      await send(ROOT);
      await visible(rowWith('long-task', 'running'), "'long-task' running in the tree", 20_000);
      // It streams at most ~65 characters a second; let it say a few sentences first.
      await sleep(6_000);
      // Record the live bubble's text length at every change, from its very first render.
      await panel.locator('body').evaluate(() => {
        const w = /** @type {any} */ (window);
        w.__arborFirst = [];
        w.__arborMo?.disconnect();
        w.__arborMo = new MutationObserver(() => {
          const md = [...document.querySelectorAll('article.live .md')].map((m) => m.textContent ?? '').join('');
          if (md.length > 0) w.__arborFirst.push(md.length);
        });
        w.__arborMo.observe(document.body, { subtree: true, childList: true, characterData: true });
      });
      await row('long-task')
        .first()
        .click({ timeout: slack(10_000) });
      await visible(live, "the child's live reply bubble after selecting it", 10_000);
      await sleep(300);
      const sizes = await panel.locator('body').evaluate(() => {
        const w = /** @type {any} */ (window);
        w.__arborMo.disconnect();
        return w.__arborFirst;
      });
      const text = await liveText(live);
      say(`  live bubble: first render ${sizes[0]} chars (then ${sizes.slice(1, 6).join(', ')}…); now ${text.length}`);
      // Without the snapshot the first render would hold one throttled delta (a few characters).
      if (!(sizes[0] >= 100)) throw new Error(`the live bubble's first render held ${sizes[0]} characters: what was streamed before selecting is missing`);
      if (!text.startsWith(SENTENCE.trim())) throw new Error(`the live bubble does not start with what the child said: ${JSON.stringify(text.slice(0, 80))}`);
    });

    await step('transcript-tab-mid-stream-shows-partial', 60_000, async () => {
      await contextMenu(row('long-task'), 'Open Transcript');
      const tabLive = tab.locator('article.live');
      // At the tab's first sight of the bubble, it must hold about what the panel's live bubble holds.
      let first = '';
      let panelNow = '';
      await until('the live reply bubble in the transcript tab', 30_000, async () => {
        if (!(await tabLive.isVisible().catch(() => false))) return false;
        first = await liveText(tabLive);
        panelNow = await liveText(live);
        return first.length > 0;
      });
      say(`  transcript tab's live bubble at first sight: ${first.length} chars (the panel's: ${panelNow.length})`);
      if (first.length < 200 || first.length < panelNow.length - 150)
        throw new Error(
          `the tab showed ${first.length} characters at first while the panel showed ${panelNow.length}: what was streamed before it opened is missing`,
        );
      // And it keeps streaming from there, in order, without repeating itself.
      await sleep(1_500);
      const later = await liveText(tabLive);
      if (!(later.length > first.length)) throw new Error('the tab did not continue the stream');
      const expected = SENTENCE.repeat(40).slice(0, later.length);
      if (later.replace(/\s+/g, ' ').trim() !== expected.replace(/\s+/g, ' ').trim())
        throw new Error(`the tab's live text is not the child's text in order (duplicated or lost words): ${JSON.stringify(later.slice(0, 200))}`);
      // The panel shows long-task: its Stop button interrupts it.
      // A dispatched click: with two webviews re-rendering a stream on a loaded machine, a
      // pointer click can wait on frames that never settle.
      await panel.locator('.composer vscode-button', { hasText: 'Stop' }).dispatchEvent('click', {}, { timeout: slack(15_000) });
      await visible(rowWith('long-task', 'interrupted'), "'long-task' interrupted", 20_000);
    });

    await step('queued-then-cancelled-never-runs', 150_000, async () => {
      await selectRow(ROOT);
      await visible(rowWith(ROOT, 'idle'), 'the root idle again', 20_000);
      await send('BUSY: a slow root task');
      await visible(live, "the root's live reply", 10_000);
      await send('QUEUED-CANCEL do not run this');
      const item = panel.locator('section.queue li', { hasText: 'QUEUED-CANCEL' });
      await visible(item, 'the queued message above the composer', 10_000);
      const header = (await panel.locator('section.queue header').textContent({ timeout: slack(2_000) })) ?? '';
      if (!/Queued \(1\)/.test(header)) throw new Error(`the section does not say Queued: ${JSON.stringify(header)}`);
      if (await chat.locator('article.msg.user', { hasText: 'QUEUED-CANCEL' }).count())
        throw new Error('the queued message is shown as sent in the transcript');
      await page.screenshot({ path: join(repoRoot, 'test-artifacts', 'ui-flows', 'stream-and-queue', '04a-queued.png'), timeout: slack(15_000) });
      await item.locator('button', { hasText: 'Cancel' }).click({ timeout: slack(5_000) });
      await until('the queued message to disappear', 10_000, async () => (await item.count()) === 0);
      await visible(rowWith(ROOT, 'idle'), 'the root idle after its busy turn', 120_000);
      await sleep(500);
      if (sent().some((t) => t.includes('QUEUED-CANCEL'))) throw new Error('the cancelled message reached the model');
      if (await chat.locator('article.msg.user', { hasText: 'QUEUED-CANCEL' }).count()) throw new Error('the cancelled message appears in the transcript');
    });

    await step('interrupted-waiting-then-send-now', 120_000, async () => {
      await send('BUSY: another slow root task');
      await visible(live, "the root's live reply", 10_000);
      await send('WAITING-SEND run me after the stop');
      const item = panel.locator('section.queue li', { hasText: 'WAITING-SEND' });
      await visible(item, 'the queued message', 10_000);
      await panel.locator('.composer vscode-button', { hasText: 'Stop' }).dispatchEvent('click', {}, { timeout: slack(10_000) });
      await visible(rowWith(ROOT, 'interrupted'), 'the root interrupted', 15_000);
      await until('the section to say Waiting', 10_000, async () =>
        /Waiting \(1\)/.test((await panel.locator('section.queue header').textContent({ timeout: slack(2_000) })) ?? ''),
      );
      const note = (await panel.locator('section.queue header').textContent({ timeout: slack(2_000) })) ?? '';
      if (!/first when you send/.test(note)) throw new Error(`the waiting section does not say it runs first: ${JSON.stringify(note)}`);
      await visible(item.locator('button', { hasText: 'Cancel' }), 'Cancel on the waiting message', 5_000);
      const sendNow = item.locator('button', { hasText: 'Send now' });
      await visible(sendNow, 'Send now on the waiting message', 5_000);
      await sleep(800);
      if (sent().some((t) => t.includes('WAITING-SEND'))) throw new Error('the waiting message ran without the user asking');
      await page.screenshot({ path: join(repoRoot, 'test-artifacts', 'ui-flows', 'stream-and-queue', '05a-waiting.png'), timeout: slack(15_000) });
      await sendNow.click({ timeout: slack(5_000) });
      await visible(chat.locator('article.msg.user', { hasText: 'WAITING-SEND' }), 'the waiting message, now sent, in the transcript', 15_000);
      await until('the waiting section to be gone', 10_000, async () => (await panel.locator('section.queue').count()) === 0);
      await until('the model to get the message', 10_000, async () => sent().some((t) => t.includes('WAITING-SEND')));
      await visible(rowWith(ROOT, 'idle'), 'the root idle after answering', 60_000);
    });
  },
};
