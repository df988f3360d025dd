// The built webview in headless chromium, driven through the scripted host: a reset that
// carries a partial reply fills the live bubble at once (decision 0010), and the session's
// queue shows above the composer with Cancel / Send now (decision 0011).
import * as assert from 'node:assert/strict';
import type { TreeNode, WebviewToHost } from '../../src/protocol';
import { webviewFixture } from '../support/webview-fixture';

const SETTINGS = { sandbox: 'workspace-write', approval: 'ask', restricted: false, hasApiKey: true, modelSource: 'endpoint', model: 'deepseek-chat' } as const;
const T = '2025-06-01T09:00:00.000Z';
const ROOT = 's-root-1';
const NODE: TreeNode = {
  id: ROOT,
  origin: 'user',
  depth: 0,
  status: 'running',
  title: 'Root',
  tokens: { prompt: 0, completion: 0, cacheHit: 0 },
  reports: 0,
  createdAt: T,
};

describe('webview in chromium: partial replies and the queue', () => {
  const w = webviewFixture('arbor-webview-queue-');
  const { send, posted, textOf, count, click } = w;
  const open = (query: Record<string, string>) => w.open(query);

  it('a transcript tab opened mid-stream shows the partial reply at once, then continues it; deltas before the reset are not doubled', async () => {
    await open({ view: 'transcript', session: ROOT });
    await send(
      { type: 'state/snapshot', nodes: [NODE], settings: SETTINGS, approvals: [] },
      // A delta the host flushed just before the reset: the reset's partial already holds it.
      { type: 'stream/delta', sessionId: ROOT, kind: 'text', delta: 'said so far' },
      {
        type: 'transcript/reset',
        sessionId: ROOT,
        entries: [{ kind: 'user', seq: 0, at: T, text: 'go', source: 'user' }],
        hasMore: false,
        partial: { text: 'Everything said so far', reasoning: 'Why: because' },
      },
      { type: 'stream/delta', sessionId: ROOT, kind: 'text', delta: ', and more.' },
    );
    assert.match(await textOf('article.live'), /Everything said so far, and more\./);
    assert.doesNotMatch(await textOf('article.live'), /said so farEverything|said so far said so far/);
    assert.match(await textOf('article.live'), /because/, 'the reasoning so far is shown too');
  });

  it('shows queued messages with Cancel, waiting ones with Send now and "runs first", and posts the intents', async () => {
    await open({ view: 'panel' });
    await send(
      { type: 'state/snapshot', nodes: [NODE], settings: SETTINGS, approvals: [], selected: ROOT },
      { type: 'transcript/reset', sessionId: ROOT, entries: [], hasMore: false },
    );
    assert.equal(await count('section.queue'), 0, 'no section without queued messages');
    await send({
      type: 'queue/changed',
      sessionId: ROOT,
      state: 'queued',
      messages: [
        { messageId: 'm1', text: 'first queued', source: 'user', at: T },
        { messageId: 'm2', text: 'second queued', source: 'followup', at: T },
      ],
    });
    assert.match(await textOf('section.queue header'), /Queued \(2\)[\s\S]*after the current turn/);
    assert.equal(await count('section.queue li'), 2);
    assert.equal(await count('section.queue li button'), 2, 'queued: Cancel only');
    assert.match(await textOf('section.queue li:nth-child(2)'), /from the parent/);
    assert.equal(await count('article.msg.user'), 0, 'queued messages are not shown as sent');
    await click('section.queue li[data-message-id="m1"] button');
    assert.deepEqual((await posted()).at(-1), {
      type: 'queue/withdraw',
      id: ((await posted()).at(-1) as { id: string }).id,
      sessionId: ROOT,
      messageId: 'm1',
      selection: 0,
    });

    await send({ type: 'queue/changed', sessionId: ROOT, state: 'waiting', messages: [{ messageId: 'm2', text: 'second queued', source: 'user', at: T }] });
    assert.match(await textOf('section.queue header'), /Waiting \(1\)[\s\S]*runs first when you send/);
    const buttons = await w.page.evaluate<string[]>(`[...document.querySelectorAll('section.queue li button')].map((b) => b.textContent.trim())`);
    assert.deepEqual(buttons, ['Send now', 'Cancel']);
    await click('section.queue li[data-message-id="m2"] button');
    const run = (await posted()).at(-1) as Extract<WebviewToHost, { type: 'queue/run' }>;
    assert.equal(run.type, 'queue/run');
    assert.equal(run.sessionId, ROOT);
    // Another session's queue is not shown here.
    await send({ type: 'queue/changed', sessionId: 'other', state: 'queued', messages: [{ messageId: 'x', text: 'elsewhere', source: 'user', at: T }] });
    assert.doesNotMatch(await textOf('section.queue'), /elsewhere/);
    await send({ type: 'queue/changed', sessionId: ROOT, state: 'queued', messages: [] });
    assert.equal(await count('section.queue'), 0);
  });
});
