import assert from 'node:assert/strict';
import { SubagentError } from '../../../src/core/subagent/types';
import { makeHarness } from '../../support/harness';
import { delivered, ofType, stopReasons, subagentWorld, waitFor } from './helpers';

// Stop means nothing else runs (decision 0100). A message on its way to a released child is a
// cold resume in progress when the user presses Stop: it must land paused (kept, queued) and
// start no turn; a send_message whose sending turn was stopped sends nothing; a message racing
// the window's close is refused, and no activation is left behind.

describe('subagent: messages racing Stop and close', () => {
  const w = subagentWorld({}, { gates: false });

  /** A continuable child that settled and was released. */
  async function releasedChild(): Promise<string> {
    w.script.on('c', { text: 'ready' });
    const { childId } = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] wait for work', label: 'c' });
    await w.t.h.settle();
    assert.equal(w.t.h.resident(childId), undefined, 'released after settling');
    return childId;
  }

  /** Hold the child's cold resume (its log read) until `release()`: the Stop lands while it is under way. */
  function holdResume(childId: string): { reached: Promise<void>; release: () => void } {
    const store = w.t.h.store;
    const inspect = store.inspect.bind(store);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const reachedP = new Promise<void>((r) => (reached = r));
    store.inspect = async (id: string) => {
      if (id === childId) {
        reached();
        await gate;
      }
      return inspect(id);
    };
    return { reached: reachedP, release };
  }

  const childRequests = () => w.script.bodies('c').length;

  it("the user's message to a released child, overtaken by a Stop of its subtree: kept, queued, no turn until the user resumes it", async () => {
    const c = await releasedChild();
    const before = childRequests();
    const held = holdResume(c);
    const sent = w.t.h.subagents.followup(null, c, '[[c]] do the next thing');
    await held.reached;
    const stopped = w.t.h.interruptSubtree(w.root.id);
    held.release();
    await stopped;
    const r = await sent;
    assert.equal(r.path, 'kept');
    await w.t.h.settle();
    await new Promise((res) => setTimeout(res, 100));
    assert.equal(childRequests(), before, 'no model request for the child after the Stop');
    const evs = w.t.h.resident(c)?.session.events ?? (await w.t.h.store.inspect(c)).events;
    assert.ok(
      ofType(evs, 'inbox/accepted').some((e) => e.messageId === r.messageId),
      'the message is kept in the child log',
    );
    assert.deepEqual(stopReasons(evs), ['completed'], 'no turn ran after the Stop');
    // The user decides: "Send now" runs the kept message.
    w.script.on('c', { text: 'did the next thing' });
    await w.t.h.runQueue(c);
    await w.t.h.settle();
    assert.equal(childRequests(), before + 1);
    const after = w.t.h.resident(c)?.session.events ?? (await w.t.h.store.inspect(c)).events;
    assert.deepEqual(stopReasons(after), ['completed', 'completed']);
  });

  it('send_message from a turn the user stopped while the child was being resumed: nothing is sent, no child turn runs', async () => {
    const c = await releasedChild();
    const before = childRequests();
    const held = holdResume(c);
    w.script.on('root', { toolCalls: [{ name: 'send_message', arguments: { agentId: c, message: '[[c]] more' } }] }, { text: 'unused' });
    await w.root.accept('[[root]] message the child');
    await held.reached;
    const stopped = w.t.h.interruptSubtree(w.root.id);
    held.release();
    await stopped;
    await w.t.h.settle();
    await new Promise((res) => setTimeout(res, 100));
    assert.equal(childRequests(), before, 'no model request for the child after the Stop');
    const result = ofType(w.root.session.events, 'tool/result').find((e) => e.name === 'send_message');
    assert.ok(!result || result.isError, `send_message reported no delivery: ${result?.content}`);
    if (result) assert.match(result.content, /interrupted before the message reached|nothing was sent/);
    const evs = w.t.h.resident(c)?.session.events ?? (await w.t.h.store.inspect(c)).events;
    assert.equal(
      ofType(evs, 'user/message').some((e) => e.text === '[[c]] more'),
      false,
      'the message was not written to the child',
    );
    assert.deepEqual(stopReasons(evs), ['completed']);
    assert.deepEqual(stopReasons(w.root.session.events).at(-1), 'interrupted');
    // The resumed child that ran nothing tells its parent nothing new: one settlement notice only.
    await waitFor(() => !w.t.h.subagents.isActive(c), 'the child to be released again');
    assert.equal(delivered(w.root.session.events, 'subagent-settled', c).length, 1, 'the settlement of its first turn only');
  });

  // Decision 0100, amended in s59: the same holds for a conversation (a root) not in memory, which
  // the human's message opens from its log (after a restart, or one `arbor acp` let go of).
  it("the human's message to a conversation being opened from its log, overtaken by a Stop: kept, waiting across a restart, no turn until Send now", async () => {
    w.script.on('root', { text: 'first' });
    await w.root.accept('[[root]] hello');
    await w.t.h.settle();
    const id = w.root.id;
    assert.equal(await w.t.h.release(id), true, 'the settled conversation is let go of');
    const rootRequests = () => w.script.bodies('root').length;
    const before = rootRequests();
    const held = holdResume(id);
    const sent = w.t.h.send(id, '[[root]] do the next thing');
    await held.reached;
    const stopped = w.t.h.interruptSubtree(id);
    held.release();
    await stopped;
    const agent = await sent;
    await w.t.h.settle();
    await new Promise((res) => setTimeout(res, 100));
    assert.equal(rootRequests(), before, 'no model request after the Stop');
    assert.deepEqual(stopReasons(agent.session.events), ['completed'], 'no turn ran after the Stop');
    assert.equal(agent.isWaiting, true, 'the message waits, queued, for the human');
    assert.ok(
      agent.queue.some((m) => m.text === '[[root]] do the next thing'),
      'the message is kept in the queue',
    );
    // Across a restart it still waits; the human's "Send now" (the conversation not in memory) runs it.
    await w.t.h.close();
    const again = await makeHarness(w.server, { storeDir: w.t.storeDir, workspace: [w.t.workspace] });
    try {
      const back = await again.h.openSession(id);
      await again.h.settle();
      assert.equal(rootRequests(), before, 'the kept message did not run by itself after the restart');
      await again.h.release(id);
      w.script.on('root', { text: 'did the next thing' });
      await again.h.runQueue(id);
      await again.h.settle();
      assert.equal(rootRequests(), before + 1, '"Send now" ran the kept message');
      const evs = again.h.resident(id)?.session.events ?? back.session.events;
      assert.deepEqual(stopReasons(evs), ['completed', 'completed']);
    } finally {
      await again.h.close();
    }
  });

  it("the human's message to a conversation not in memory, with a Stop in the same tick: kept, no turn", async () => {
    w.script.on('root', { text: 'first' });
    await w.root.accept('[[root]] hello');
    await w.t.h.settle();
    const id = w.root.id;
    assert.equal(await w.t.h.release(id), true);
    const before = w.script.bodies('root').length;
    const sent = w.t.h.send(id, '[[root]] at once');
    await w.t.h.interruptSubtree(id);
    const agent = await sent;
    await w.t.h.settle();
    await new Promise((res) => setTimeout(res, 100));
    assert.equal(w.script.bodies('root').length, before, 'no model request after the Stop');
    assert.equal(agent.isWaiting, true);
  });

  it('a follow-up racing the harness close is refused (CLOSING) and leaves no activation; the store closes whole', async () => {
    const c = await releasedChild();
    const held = holdResume(c);
    const sent = w.t.h.subagents.followup(null, c, '[[c]] late');
    await held.reached;
    const closing = w.t.h.close();
    held.release();
    await assert.rejects(sent, (e: unknown) => e instanceof SubagentError && e.code === 'CLOSING' && /nothing was sent/.test(e.message));
    await closing;
    assert.equal(w.t.h.resident(c), undefined, 'no activation left resident after the close');
    // Reopened: the message is not in the child's log, the child ran nothing more.
    const again = await makeHarness(w.server, { storeDir: w.t.storeDir, workspace: [w.t.workspace] });
    try {
      const evs = (await again.h.store.inspect(c)).events;
      assert.equal(
        ofType(evs, 'user/message').some((e) => e.text === '[[c]] late'),
        false,
      );
      assert.deepEqual(stopReasons(evs), ['completed']);
    } finally {
      await again.h.close();
    }
  });
});
