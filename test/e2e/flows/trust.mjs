// Delegation you can trust (issue 9), in real VS Code:
//   01 "start a long task": the root delegates a slow child and goes idle; the child runs
//   02 right-click the *root* → Interrupt Agent: the running child under it stops (its subtree),
//      the root's own state is untouched, and nothing resumes by itself
//   03 another long task in the same conversation, then reload the window while the child runs: after the reload the
//      tree shows the child interrupted (never settled) and the root's chat has its notice
import { slack } from '../lib/patience.mjs';
export const flow = {
  name: 'trust',
  async run({ chat, row, rowWith, send, contextMenu, reload, openPanel, step, until, visible, sleep, model, say }) {
    const ROOT = 'start a long task';
    await step('child-running-under-idle-root', 60_000, async () => {
      await openPanel();
      await send(ROOT);
      await visible(rowWith('long-task', 'running'), "'long-task' running", 30_000);
      await sleep(500);
    });

    await step('stop-subtree-from-parent', 45_000, async () => {
      const before = model.requests.length;
      await contextMenu(row(ROOT).first(), 'Interrupt Agent');
      await visible(rowWith('long-task', 'interrupted'), "'long-task' interrupted by stopping its parent's subtree", 20_000);
      await sleep(1_500);
      const label =
        (await row(ROOT)
          .first()
          .getAttribute('aria-label', { timeout: slack(5_000) })) ?? '';
      say(`  root after the subtree stop: ${label}`);
      if (/interrupted|running/.test(label.split(',')[1] ?? '')) throw new Error(`the root itself changed state: ${label}`);
      // The child's notice reached the root (it was idle, not interrupted): whatever it does,
      // the child is not resumed — no request carries the child's task after the stop.
      const childAgain = model.requests
        .slice(before)
        .filter((r) => r.body.messages.some((m) => String(m.content ?? '').startsWith('LONG:')) && r.body.messages.at(-1)?.role !== 'tool');
      if (childAgain.length > 1) throw new Error(`the stopped child asked the model again (${childAgain.length} requests)`);
    });

    await step('reload-while-child-runs', 120_000, async () => {
      await send('start a long task again');
      await until("a second 'long-task' running", 30_000, async () => (await rowWith('long-task', 'running').count()) > 0);
      await sleep(800);
      await reload();
      await openPanel();
      // Every long-task child reads interrupted after the reload; none reads settled or running.
      await until(
        'both long-task children to read interrupted after the reload',
        40_000,
        async () => (await rowWith('long-task', 'interrupted').count()) === 2,
      );
      if ((await rowWith('long-task', 'settled').count()) > 0) throw new Error('a child that died with the window reads settled');
      // The message went to the same (selected) conversation: its chat shows the notice.
      await visible(chat.locator('article.msg.settled', { hasText: 'long-task' }).last(), "the root's notice that its child was interrupted", 20_000);
      const notice =
        (await chat
          .locator('article.msg.settled', { hasText: 'long-task' })
          .last()
          .textContent({ timeout: slack(5_000) })) ?? '';
      if (!/interrupted/.test(notice)) throw new Error(`the notice says ${JSON.stringify(notice.slice(0, 200))}`);
    });
  },
};
