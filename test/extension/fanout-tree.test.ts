import assert from 'node:assert/strict';
import { statusBarView } from '../../src/extension/presenter/status-bar';
import type { TreeNode } from '../../src/protocol';
import { Gates, hold, Script, waitFor } from '../core/subagent/helpers';
import { panelPerTest } from '../support/panel';

// Issue 10.9: a child waiting for a free slot is shown as queued in the tree, and stops
// being queued the moment it gets one (no event of its own says so).
describe('extension: the tree shows subagents queued for a slot', () => {
  let gates: Gates;
  let script: Script;
  // Registered first, so it runs before the panel and harness close: held tools let go.
  afterEach(() => gates.releaseAll());
  const w = panelPerTest({ harness: { maxConcurrentChildren: 1 } });
  beforeEach(() => {
    script = new Script(w.server);
    gates = new Gates().install(w.t.h);
  });

  it('queued while it waits (status queued, activity says why), running once admitted, then settled', async () => {
    const port = w.port;
    const spawn = (tag: string) => ({ name: 'subagent', arguments: { prompt: `[[${tag}]] go`, label: tag, mode: 'continuable' } });
    script.on('root', { toolCalls: [spawn('first'), spawn('second')] }, { text: 'both started' });
    script.on('first', { toolCalls: [hold('first')] }, { text: 'first done' });
    script.on('second', { toolCalls: [hold('second')] }, { text: 'second done' });
    await w.c.receive(port, { type: 'chat/send', id: 'r1', text: '[[root]] start two' });
    await gates.whenHeld('first');
    await waitFor(() => w.t.h.subagents.fanout.queued().length === 1, 'second to queue');
    const second = w.t.h.subagents.fanout.queued()[0];
    const first = w.t.h.store.list().find((h) => h.title === 'first')!.id;
    const last = (id: string): TreeNode => port.node(id)!;

    await waitFor(() => last(second)?.status === 'queued', 'a queued node');
    assert.match(last(second).activity ?? '', /waiting for a free slot/);
    assert.equal(last(first).status, 'running');
    // The status bar counts what the tree shows (the root may still be finishing its turn).
    const counts = w.c.statusCounts();
    assert.equal(counts.queued, 1);
    assert.match(statusBarView(counts).text, /· 1 queued/);
    const snap = await w.c.nodes();
    assert.equal(snap.find((n) => n.id === second)?.status, 'queued', 'a late snapshot shows it queued too');

    gates.release('first');
    await gates.whenHeld('second');
    await waitFor(() => last(second).status === 'running', 'the node to leave the queue');
    gates.release('second');
    await w.t.h.settle();
    await waitFor(() => last(second).status === 'settled', 'second to settle');
  });
});
