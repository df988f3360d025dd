// Stop means nothing else runs (issue 21.2), through the panel:
//   01 a conversation whose own turn streams while its child 'worker' runs
//   02 Stop (the composer's, with the conversation selected): the worker is interrupted, the
//      conversation ends its own turn "interrupted"; the worker's settlement notice waits
//      (shown as Waiting) and wakes nothing: no model request follows the Stop, a few release
//      delays later
//   03 the next message the user sends: the waiting notice is in the conversation's history
//      (the request for the user's message carries it) and in its chat
//   04 the same conversation, "start a long task": its turn ends ("Started it"), it waits on
//      its child 'long-task' (the case of issue 21.2)
//   05 Stop: long-task is interrupted; its notice waits and wakes nothing (no model request)
//   06 the next message carries that notice too
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { repoRoot } from '../../../scripts/e2e/paths.mjs';
import { RELEASE_DELAY_MS } from '../lib/flow.mjs';
import { slack } from '../lib/patience.mjs';

const require = createRequire(import.meta.url);
const { demoReply } = require(join(repoRoot, 'out', 'test', 'support', 'demo-script.js'));

const ROOT = 'start a worker and keep talking';
const TALK = 'While the worker runs I keep thinking aloud, slowly, one clause at a time. ';

const lastUser = (msgs) => String([...msgs].reverse().find((m) => m.role === 'user')?.content ?? '');
const isChild = (msgs) => msgs.some((m) => m.role === 'user' && String(m.content ?? '').startsWith('[Arbor runtime] You are a subagent'));
const firstUser = (msgs) => String(msgs.find((m) => m.role === 'user')?.content ?? '');

/** The demo's model; in this conversation the root starts a slow child, then streams slowly itself. */
function reply(body) {
  const msgs = body.messages;
  const last = msgs[msgs.length - 1];
  if (!isChild(msgs) && firstUser(msgs) === ROOT && lastUser(msgs) === ROOT) {
    if (last.role === 'user' && String(last.content) === ROOT)
      return { toolCalls: [{ name: 'subagent', arguments: { prompt: 'LONG: analyse everything slowly.', label: 'worker', mode: 'continuable' } }] };
    if (last.role === 'tool' && String(last.content).includes('"status": "started"')) return { text: TALK.repeat(30), chunkSize: 4, chunkDelayMs: 60 };
  }
  return demoReply(body);
}

/** A request's user-role texts, in order. */
const userTexts = (r) => r.body.messages.filter((m) => m.role === 'user').map((m) => String(m.content ?? ''));
const isNotice = (t, child) => t.startsWith(`[subagent ${child} settled`);

export const flow = {
  name: 'stop-subtree',
  model: (model) => model.setFallback(reply),
  async run({ panel, chat, row, rowWith, send, openPanel, step, until, visible, sleep, say, model }) {
    const stop = panel.locator('.composer vscode-button', { hasText: 'Stop' });
    const waiting = panel.locator('section.queue.waiting');
    let before = 0;

    /** Stop with the conversation selected: `child` is interrupted, its notice waits, no model request follows. */
    async function stopStaysQuiet(child) {
      before = model.requests.length;
      // A dispatched click: with the chat re-rendering a stream on a loaded machine, a pointer
      // click can wait on frames that never settle.
      await stop.dispatchEvent('click', {}, { timeout: slack(15_000) });
      await visible(rowWith(child, 'interrupted'), `the child '${child}' interrupted`, 20_000);
      // The child's notice reached the conversation and waits for the human; it woke nothing.
      await visible(waiting.locator('li', { hasText: 'settlement notice' }), `${child}'s settlement notice waiting above the composer`, 20_000);
      await sleep(RELEASE_DELAY_MS * 10);
      const after = model.requests.slice(before);
      const label = await row(ROOT)
        .first()
        .getAttribute('aria-label', { timeout: slack(5_000) });
      say(`  requests after Stop: ${after.length}; the conversation reads "${label}"`);
      if (after.length)
        throw new Error(
          `Stop was followed by ${after.length} model request(s); the first one's last message: ${JSON.stringify(after[0].body.messages.at(-1)).slice(0, 300)}`,
        );
      if (/, (running|queued)/.test(label ?? '')) throw new Error(`the conversation runs again after the Stop: ${label}`);
      if (!(await waiting.count())) throw new Error(`${child}'s notice no longer waits: something took it`);
    }

    /** The user's next message: the request for it carries `child`'s notice, which the chat shows too. */
    async function nextCarriesNotice(text, child) {
      await send(text);
      const request = await until(`the model to be asked about "${text}"`, 30_000, async () =>
        model.requests.slice(before).find((r) => userTexts(r).at(-1) === text),
      );
      const texts = userTexts(request);
      const notice = texts.slice(0, -1).find((t) => isNotice(t, child));
      say(`  the request for "${text}" carries: ${JSON.stringify(notice?.slice(0, 120))}`);
      if (!notice)
        throw new Error(`the request for "${text}" does not carry ${child}'s notice; its user messages: ${JSON.stringify(texts.map((t) => t.slice(0, 80)))}`);
      if (!/settled: interrupted/.test(notice)) throw new Error(`the notice does not say ${child} was interrupted: ${JSON.stringify(notice.slice(0, 300))}`);
      await visible(chat.locator('article.msg.settled', { hasText: child }), `${child}'s notice in the conversation's chat`, 15_000);
      await visible(rowWith(ROOT, 'idle'), 'the conversation idle after answering', 30_000);
      if (await waiting.count()) throw new Error('a message still waits after the next message ran');
    }

    await step('root-streams-while-child-runs', 120_000, async () => {
      await openPanel();
      await send(ROOT);
      await visible(rowWith('worker', 'running'), "the child 'worker' running", 30_000);
      await visible(chat.locator('article.live', { hasText: 'thinking aloud' }), "the conversation's own reply streaming", 30_000);
      await visible(rowWith(ROOT, 'running'), 'the conversation itself running', 10_000);
    });

    await step('stop-running-root-stays-quiet', 90_000, async () => {
      await stopStaysQuiet('worker');
      if (!(await rowWith(ROOT, 'interrupted').count())) throw new Error('the conversation does not read interrupted: its own turn did not end so');
    });

    await step('next-message-carries-the-notice', 60_000, () => nextCarriesNotice('what became of the worker?', 'worker'));

    await step('root-waits-on-its-child', 60_000, async () => {
      await send('start a long task');
      await visible(rowWith('long-task', 'running'), "the child 'long-task' running", 30_000);
      await visible(chat.locator('article.msg.assistant', { hasText: 'Started it' }), "the conversation's answer (its turn ended)", 20_000);
      await visible(rowWith(ROOT, 'waiting'), 'the conversation waiting on its child', 10_000);
    });

    await step('stop-waiting-root-stays-quiet', 90_000, () => stopStaysQuiet('long-task'));

    await step('next-message-carries-that-notice', 60_000, () => nextCarriesNotice('and the long task?', 'long-task'));
  },
};
