// The core tour, in order (each step in the UI):
//   01 open the Arbor panel from the activity bar; the chat input is there
//   02 type a message and send it; the assistant's answer streams into the chat
//   03 "survey the workspace": a 'surveyor' child appears under the root and settles; its
//      report and the settlement notice appear in the root's chat
//   04 right-click the child → "Open Transcript": an editor tab shows the child's messages
//   05 select the child, send it a follow-up: it is resumed from its log and answers
//   06 "start a long task": the 'long-task' child runs; right-click → "Interrupt Agent"
//   07 right-click a message of the root → "Fork Conversation": a fork node appears under
//      the root, selected; a message sent to it is answered
//   08 reload the window: the tree (every node above) and the transcript tab come back
import { SEL } from '../lib/flow.mjs';
import { slack } from '../lib/patience.mjs';

export const flow = {
  name: 'tour',
  async run({ page, panel, tab, chat, row, rowWith, rowIds, send, contextMenu, inView, selectRow, openPanel, reload, step, until, visible, sleep, say }) {
    const ROOT = 'hello Arbor';
    let rootId;
    let surveyorId;
    let forkId;

    // ── 1 ────────────────────────────────────────────────────────────────────
    await step('open-panel', 60_000, async () => {
      await openPanel();
      await until('the panel to be ready (snapshot received)', 15_000, async () =>
        (await panel.locator('.tree-body').textContent({ timeout: slack(2_000) }))?.includes('No conversations yet'),
      );
      const alerts = await panel.locator('[role="alert"]').allTextContents();
      if (alerts.length) throw new Error(`the panel shows an error: ${alerts.join(' / ')}`);
    });

    // ── 2 ────────────────────────────────────────────────────────────────────
    await step('chat-streamed-answer', 30_000, async () => {
      // Record what the live (streaming) bubble shows as it grows, to see the stream itself.
      await panel.locator('body').evaluate(() => {
        const w = /** @type {any} */ (window);
        w.__arborLive = [];
        w.__arborMo?.disconnect();
        w.__arborMo = new MutationObserver(() => {
          const live = document.querySelector('article.live');
          if (live) w.__arborLive.push(live.textContent?.length ?? 0);
        });
        w.__arborMo.observe(document.body, { subtree: true, childList: true, characterData: true });
      });
      await send(ROOT, { button: true });
      await visible(chat.locator('article.msg.user', { hasText: ROOT }), 'the sent message in the chat', 10_000);
      await inView(chat.locator('article.msg.assistant', { hasText: 'Arbor demo (scripted model)' }), "the assistant's answer", 20_000);
      const sizes = await panel.locator('body').evaluate(() => {
        const w = /** @type {any} */ (window);
        w.__arborMo.disconnect();
        return w.__arborLive;
      });
      const distinct = new Set(sizes.filter((n) => n > 0));
      say(`  streaming bubble seen at ${distinct.size} sizes (${[...distinct].slice(0, 8).join(', ')}…)`);
      if (distinct.size < 2) throw new Error(`the answer did not stream in (the live bubble was seen at ${distinct.size} size(s))`);
      await visible(rowWith(ROOT, 'idle'), `the root node "${ROOT}" in the tree`, 10_000);
      rootId = await row(ROOT).getAttribute('data-row-id', { timeout: slack(5_000) });
      if (!rootId) throw new Error('the root row has no data-row-id');
    });

    // ── 3 ────────────────────────────────────────────────────────────────────
    await step('child-appears-and-settles', 40_000, async () => {
      await send('survey the workspace');
      await visible(row('surveyor'), "the 'surveyor' node in the tree", 15_000);
      const level = await row('surveyor').getAttribute('aria-level', { timeout: slack(5_000) });
      if (level !== '2') throw new Error(`'surveyor' is at tree level ${level}, expected 2 (under the root)`);
      surveyorId = await row('surveyor').getAttribute('data-row-id', { timeout: slack(5_000) });
      // Its tooltip's second line is "ORIGIN · depth N · …"; a child's id extends its parent's.
      const origin = ((await row('surveyor').getAttribute('title', { timeout: slack(5_000) })) ?? '').split('\n')[1] ?? '';
      if (!surveyorId?.startsWith(`${rootId}.`) || !origin.startsWith('subagent · depth 1')) {
        throw new Error(`'surveyor' (${surveyorId}, "${origin}") is not a subagent of the root (${rootId})`);
      }
      await visible(rowWith('surveyor', 'settled'), "'surveyor' with status settled", 25_000);
      await visible(chat.locator('article.msg.report', { hasText: 'Listed the files' }), "the surveyor's report in the root's chat", 10_000);
      await visible(chat.locator('article.msg.settled', { hasText: 'surveyor' }), 'the settlement notice in the root chat', 10_000);
      await inView(chat.locator('article.msg.settled', { hasText: 'surveyor' }), 'the settlement notice');
      const notice =
        (await chat
          .locator('article.msg.settled')
          .first()
          .textContent({ timeout: slack(5_000) })) ?? '';
      if (!/settled/.test(notice)) throw new Error(`the settlement notice says ${JSON.stringify(notice)}`);
    });

    // ── 4 ────────────────────────────────────────────────────────────────────
    await step('open-transcript-tab', 30_000, async () => {
      await contextMenu(row('surveyor'), 'Open Transcript');
      // The tab is named like the tree row (the id stays in tooltips).
      await visible(page.locator(SEL.editorTab, { hasText: /^surveyor$/ }), 'the editor tab "surveyor"', 15_000);
      await visible(tab.locator('.transcript-view'), 'the transcript webview in the tab', 20_000);
      await visible(tab.locator('article.msg.assistant', { hasText: 'Survey done' }), "the child's final answer in the tab", 15_000);
      await visible(tab.locator('article.msg', { hasText: 'SURVEY: list the workspace files' }), "the child's task in the tab", 5_000);
      const head = (await tab.locator('.head .name').textContent({ timeout: slack(5_000) }))?.trim();
      if (head !== 'surveyor') throw new Error(`the tab's header names ${JSON.stringify(head)}, expected "surveyor"`);
    });

    // ── 5 ────────────────────────────────────────────────────────────────────
    await step('follow-up-cold-resume', 40_000, async () => {
      await selectRow('surveyor');
      await visible(chat.locator('article.msg.assistant', { hasText: 'Survey done' }), "the surveyor's transcript in the panel chat", 10_000);
      await visible(rowWith('surveyor', 'settled'), "'surveyor' released (settled) before the follow-up", 10_000);
      await send('please also check the tests');
      await inView(chat.locator('article.msg.assistant', { hasText: 'Follow-up received' }), "the child's answer to the follow-up", 25_000);
      // The open transcript tab shows the same session and follows it live.
      await visible(tab.locator('article.msg.assistant', { hasText: 'Follow-up received' }), 'the follow-up answer in the transcript tab', 10_000);
      await visible(rowWith('surveyor', 'settled'), "'surveyor' settled again", 15_000);
    });

    // ── 6 ────────────────────────────────────────────────────────────────────
    await step('interrupt-from-tree', 40_000, async () => {
      await selectRow(ROOT);
      await send('start a long task');
      await visible(rowWith('long-task', 'running'), "'long-task' running in the tree", 20_000);
      // Let it stream a little, so an interrupt cuts real work.
      await sleep(800);
      await contextMenu(row('long-task'), 'Interrupt Agent');
      await visible(rowWith('long-task', 'interrupted'), "'long-task' with status interrupted", 15_000);
      await visible(chat.locator('article.msg.settled', { hasText: 'long-task' }), "the root's notice that long-task settled", 10_000);
    });

    // ── 7 ────────────────────────────────────────────────────────────────────
    await step('fork-message', 40_000, async () => {
      const before = new Set(await rowIds());
      // Fork the root from its first answer (the demo's help).
      const message = chat.locator('article.msg.assistant', { hasText: 'Arbor demo (scripted model)' }).first();
      await contextMenu(message, 'Fork Conversation');
      forkId = await until('a new node in the tree', 15_000, async () => (await rowIds()).find((id) => !before.has(id)));
      const fork = panel.locator(`[role="treeitem"][data-row-id="${forkId}"]`);
      await visible(fork.locator('.origin.fork'), 'the new node with the fork icon', 5_000);
      const title = (await fork.getAttribute('title', { timeout: slack(5_000) })) ?? '';
      if (!/^fork of /m.test(title.split('\n')[1] ?? '')) throw new Error(`the new node is not a fork: ${JSON.stringify(title)}`);
      if ((await fork.getAttribute('aria-level')) !== '2') throw new Error(`the fork is not under its parent (level ${await fork.getAttribute('aria-level')})`);
      if (!title.includes(`fork of ${ROOT}`)) throw new Error(`the fork's parent is not the root: ${JSON.stringify(title)}`);
      await until('the fork to be selected', 10_000, async () => (await fork.getAttribute('aria-selected', { timeout: slack(2_000) })) === 'true');
      await until('the chat to show the fork (its header says "fork of")', 10_000, async () =>
        (await chat.locator('.head .of').textContent({ timeout: slack(2_000) }))?.includes('fork of'),
      );
      const answers = chat.locator('article.msg.assistant', { hasText: 'Arbor demo (scripted model)' });
      const n0 = await until("the fork's copied history", 10_000, async () => answers.count());
      await send('what can you do here?');
      await visible(chat.locator('article.msg.user', { hasText: 'what can you do here?' }), 'the message sent to the fork', 10_000);
      await until("the fork's answer", 20_000, async () => (await answers.count()) > n0);
      const last = chat.locator('article.msg').last();
      if (!((await last.textContent({ timeout: slack(5_000) })) ?? '').includes('Arbor demo')) throw new Error("the fork's chat does not end with its answer");
      await inView(last, "the fork's answer");
    });

    // ── 8 ────────────────────────────────────────────────────────────────────
    const expectRows = [
      [ROOT, 'root'],
      ['surveyor', 'settled'],
      ['long-task', 'interrupted'],
    ];
    await step('reload-restores', 90_000, async () => {
      await reload();
      for (const [name, status] of expectRows) {
        await visible(
          status === 'root' ? row(name) : rowWith(name, status),
          `the node "${name}"${status === 'root' ? '' : ` (${status})`} after the reload`,
          20_000,
        );
      }
      await visible(panel.locator(`[role="treeitem"][data-row-id="${forkId}"] .origin.fork`), `the fork node ${forkId} after the reload`, 10_000);
      await visible(page.locator(SEL.editorTab, { hasText: /^surveyor$/ }), 'the transcript tab "surveyor" after the reload', 20_000);
      await visible(tab.locator('article.msg.assistant', { hasText: 'Survey done' }), "the restored tab's content", 30_000);
      await visible(tab.locator('article.msg.assistant', { hasText: 'Follow-up received' }), "the restored tab's follow-up answer", 10_000);
    });
  },
};
