import assert from 'node:assert/strict';
import type { SessionEvent } from '../../../src/core/session/events';
import type { AgentListing } from '../../../src/core/subagent/types';
import { fileSyncs } from '../../support/file-syncs';
import { hold, ofType, stopReasons, subagentWorld, waitFor } from './helpers';

// Issue 10.9: one harness-wide limit on children running at once. The rest queue in FIFO
// order with their turn open and no request made; a queued child that is stopped never asks
// the model; a child waiting on its own children lends them its slot.

const spawn = (tag: string, mode: 'wait' | 'continuable' | 'background' = 'wait') => ({
  name: 'subagent',
  arguments: { prompt: `[[${tag}]] task ${tag}`, label: tag, mode },
});
const requestsOf = (evs: readonly SessionEvent[]) => ofType(evs, 'request/header').length;

describe('subagent: bounded fan-out (a harness-wide limit on children running at once)', () => {
  describe('under the default limit', () => {
    const w = subagentWorld({}, { gates: false });

    it('one message with 300 subagent calls never has more than 8 children asking the model at once; all 300 answer', async () => {
      const n = 300;
      const tags = Array.from({ length: n }, (_, i) => `c${i}`);
      w.script.on('root', { toolCalls: tags.map((t) => spawn(t)) }, { text: 'all done' });
      // Each child's request takes a little while, so unbounded children would overlap.
      for (const t of tags) w.script.on(t, { text: `${t} done`, delayMs: 10 });
      await w.root.accept('[[root]] fan out');
      await w.t.h.settle();

      assert.ok(w.server.maxInFlight <= 8, `${w.server.maxInFlight} requests were in flight at once`);
      assert.ok(w.server.maxInFlight > 1, 'children still ran side by side');
      const results = ofType(w.root.session.events, 'tool/result');
      assert.equal(results.length, n);
      for (const r of results) assert.ok(!r.isError, r.content);
      for (const t of tags) assert.equal(w.script.bodies(t).length, 1, `${t} asked the model once`);
      assert.deepEqual(stopReasons(w.root.session.events), ['completed']);
      assert.equal(w.t.h.subagents.fanout.running, 0);
      assert.deepEqual(w.t.h.subagents.fanout.queued(), []);
    });
  });

  describe('under a small limit', () => {
    const w = subagentWorld({}, { perTest: true });
    const idOf = (label: string) => w.t.h.store.list().find((h) => h.title === label)!.id;
    /** c1 (running) and the queued c2 and c3 all ended interrupted, the queued two without a request or a model call; the fan-out is empty. */
    const assertStoppedWhileQueued = async () => {
      const fanout = w.t.h.subagents.fanout;
      for (const t of ['c1', 'c2', 'c3']) {
        const evs = await w.t.h.store.readEvents(idOf(t));
        assert.deepEqual(stopReasons(evs), ['interrupted'], t);
        if (t !== 'c1') assert.equal(requestsOf(evs), 0, `${t} made no request`);
      }
      assert.equal(w.script.bodies('c2').length + w.script.bodies('c3').length, 0);
      assert.equal(fanout.running, 0);
      assert.deepEqual(fanout.queued(), []);
    };
    const labelOf = (id: string) => w.t.h.store.header(id)!.title!;
    const eventsOf = (label: string) => w.t.h.resident(idOf(label))?.session.events ?? [];

    it('the rest queue in FIFO order, turn open and no request made, and list_agents shows them queued', async () => {
      await w.setup({ maxConcurrentChildren: 2 });
      const fanout = w.t.h.subagents.fanout;
      w.script.on(
        'root',
        { toolCalls: ['c1', 'c2', 'c3', 'c4'].map((t) => spawn(t, 'continuable')) },
        { toolCalls: [hold('r')] },
        { toolCalls: [{ name: 'list_agents', arguments: {} }] },
        { text: 'listed' },
      );
      for (const t of ['c1', 'c2', 'c3', 'c4']) w.script.on(t, { toolCalls: [hold(t)] }, { text: `${t} done` });
      await w.root.accept('[[root]] start four');
      await w.gates.whenHeld('r');
      await w.gates.whenHeld('c1');
      await w.gates.whenHeld('c2');
      await waitFor(() => fanout.queued().length === 2, 'two children to queue');
      const order = fanout.queued().map(labelOf);
      assert.deepEqual([...order].sort(), ['c3', 'c4']);
      for (const t of order) {
        const evs = eventsOf(t);
        assert.equal(ofType(evs, 'turn/start').length, 1, `${t}'s turn is open`);
        assert.equal(requestsOf(evs), 0, `${t} made no request while queued`);
        assert.equal(w.script.bodies(t).length, 0);
      }

      // The parent asks: the queued ones say so.
      w.gates.release('r');
      await waitFor(() => ofType(w.root.session.events, 'tool/result').some((e) => e.name === 'list_agents'), 'list_agents to answer');
      const listed = JSON.parse(ofType(w.root.session.events, 'tool/result').find((e) => e.name === 'list_agents')!.content) as AgentListing[];
      const byLabel = new Map(listed.map((l) => [l.label, l]));
      for (const t of ['c1', 'c2']) assert.equal(byLabel.get(t)?.status, 'running', t);
      for (const t of ['c3', 'c4']) assert.equal(byLabel.get(t)?.status, 'queued', t);

      // One slot frees: the head of the queue takes it, the other still waits without a request.
      w.gates.release('c1');
      await w.gates.whenHeld(order[0]);
      assert.deepEqual(fanout.queued().map(labelOf), [order[1]]);
      assert.equal(requestsOf(eventsOf(order[1])), 0);
      w.gates.release('c2');
      await w.gates.whenHeld(order[1]);
      w.gates.releaseAll();
      await w.t.h.settle();
      for (const t of ['c1', 'c2', 'c3', 'c4']) assert.deepEqual(stopReasons(await w.t.h.store.readEvents(idOf(t))), ['completed'], t);
    });

    it("a child's slot passes on once its closing facts are staged: the next child asks the model while the last fdatasync still runs", async () => {
      await w.setup({ maxConcurrentChildren: 1 });
      const fanout = w.t.h.subagents.fanout;
      w.script.on('root', { toolCalls: [spawn('c1', 'continuable'), spawn('c2', 'continuable')] }, { text: 'started both' });
      w.script.on('c1', { text: 'c1 done' });
      w.script.on('c2', { text: 'c2 done', delayMs: 300 });
      // Once c1's reply is staged, every fdatasync waits until the gate opens: c1's turn/end
      // cannot become durable, and c2 (queued, its own facts on disk long since) must still run.
      const syncs = await fileSyncs();
      let open!: () => void;
      const gate = new Promise<void>((r) => (open = r));
      let held = 0;
      let restore = () => {};
      const stop = w.t.h.store.onStaged((id, e) => {
        if (e.type !== 'assistant/message' || w.t.h.store.header(id)?.title !== 'c1') return;
        restore = syncs.replace(
          'datasync',
          (datasync) =>
            async function () {
              held++;
              await gate;
              return datasync.call(this);
            },
        );
      });
      try {
        await w.root.accept('[[root]] start two');
        await waitFor(() => w.script.bodies('c2').length === 1, 'c2 to ask the model');
        assert.ok(held > 0, "c1's closing fdatasync is still held");
        const c1 = w.t.h.resident(idOf('c1'))!;
        assert.equal(c1.session.openTurnId, null, "c1's turn is over in memory");
        assert.equal(fanout.running, 1, 'c2 holds the one slot');
      } finally {
        stop();
        restore();
        open();
      }
      await w.t.h.settle();
      for (const t of ['c1', 'c2']) assert.deepEqual(stopReasons(await w.t.h.store.readEvents(idOf(t))), ['completed'], t);
      assert.equal(fanout.running, 0);
    });

    it('a queued child that is interrupted before it starts never asks the model and ends its turn cleanly', async () => {
      await w.setup({ maxConcurrentChildren: 1 });
      const fanout = w.t.h.subagents.fanout;
      w.script.on('root', { toolCalls: [spawn('c1', 'continuable'), spawn('c2', 'continuable')] }, { text: 'started both' });
      w.script.on('c1', { toolCalls: [hold('c1')] }, { text: 'c1 done' });
      w.script.on('c2', { text: 'c2 must not run' });
      await w.root.accept('[[root]] start two');
      await w.gates.whenHeld('c1');
      await waitFor(() => fanout.queued().length === 1, 'c2 to queue');
      const c2 = idOf('c2');
      assert.deepEqual(fanout.queued(), [c2]);

      assert.deepEqual(await w.t.h.interruptSubtree(c2), [c2]);
      const evs = await w.t.h.store.readEvents(c2);
      assert.deepEqual(stopReasons(evs), ['interrupted']);
      assert.equal(requestsOf(evs), 0);
      assert.equal(w.t.h.resident(c2)?.session.openTurnId ?? null, null, 'its turn is closed');
      assert.deepEqual(fanout.queued(), []);

      w.gates.release('c1');
      await w.t.h.settle();
      assert.equal(w.script.bodies('c2').length, 0, 'c2 never asked the model, not even after the slot freed');
      assert.deepEqual(stopReasons(await w.t.h.store.readEvents(idOf('c1'))), ['completed']);
      assert.equal(fanout.running, 0);
    });

    it("interrupting the parent's turn cancels its queued children too: none asks the model", async () => {
      await w.setup({ maxConcurrentChildren: 1 });
      const fanout = w.t.h.subagents.fanout;
      w.script.on('root', { toolCalls: [spawn('c1'), spawn('c2'), spawn('c3')] }, { text: 'never reached' });
      w.script.on('c1', { toolCalls: [hold('c1')] }, { text: 'c1 done' });
      await w.root.accept('[[root]] three in parallel');
      await w.gates.whenHeld('c1');
      await waitFor(() => fanout.queued().length === 2, 'c2 and c3 to queue');

      await w.root.cancel('interrupted');
      await w.t.h.settle();
      assert.deepEqual(stopReasons(w.root.session.events), ['interrupted']);
      await assertStoppedWhileQueued();
    });

    it("stopping the parent's subtree (the tree's Stop) stops its queued continuable children before they ask the model", async () => {
      await w.setup({ maxConcurrentChildren: 1 });
      const fanout = w.t.h.subagents.fanout;
      w.script.on(
        'root',
        { toolCalls: [spawn('c1', 'continuable'), spawn('c2', 'continuable'), spawn('c3', 'background')] },
        { toolCalls: [hold('r')] },
        { text: 'never reached' },
      );
      w.script.on('c1', { toolCalls: [hold('c1')] }, { text: 'c1 done' });
      await w.root.accept('[[root]] start three');
      await w.gates.whenHeld('c1');
      await w.gates.whenHeld('r');
      await waitFor(() => fanout.queued().length === 2, 'c2 and c3 to queue');

      const stopped = await w.t.h.interruptSubtree(w.root.id);
      assert.deepEqual([...stopped].sort(), [w.root.id, idOf('c1'), idOf('c2'), idOf('c3')].sort());
      await w.t.h.settle();
      await assertStoppedWhileQueued();
    });

    it('children that wait on their own children lend them their slot: nested waits finish under a limit of 1', async () => {
      await w.setup({ maxConcurrentChildren: 1 });
      w.script.on('root', { toolCalls: [spawn('p1'), spawn('p2')] }, { text: 'root done' });
      for (const p of ['p1', 'p2']) {
        w.script.on(p, { toolCalls: [spawn(`g${p}`)], delayMs: 20 }, { text: `${p} done`, delayMs: 20 });
        w.script.on(`g${p}`, { text: `g${p} done`, delayMs: 20 });
      }
      await w.root.accept('[[root]] two that delegate');
      await w.t.h.settle();
      assert.deepEqual(stopReasons(w.root.session.events), ['completed']);
      for (const r of ofType(w.root.session.events, 'tool/result')) assert.ok(!r.isError, r.content);
      assert.equal(w.server.maxInFlight, 1, 'one child asked the model at a time');
      assert.equal(w.t.h.subagents.fanout.running, 0);
    });
  });
});
