import assert from 'node:assert/strict';
import { Harness } from '../../../src/core/harness';
import { hold, ofType, stopReasons, subagentWorld } from './helpers';

// A window reload closes the harness with children running: their turns end `interrupted`
// (saying why) and each parent gets its settlement notice, as history — the same notices a
// crash recovery delivers, never dropped, never run.
describe('subagent: closing the harness delivers the settlement notices', () => {
  const w = subagentWorld();

  it('a running continuable child ends interrupted on close and its parent gets one notice; reopening adds none', async () => {
    w.script.on(
      'root',
      { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] long', label: 'long', mode: 'continuable' } }] },
      { text: 'root started it' },
    );
    w.script.on('c', { toolCalls: [hold('c')] });
    await w.root.accept('[[root]] go');
    await w.gates.whenHeld('c');
    await w.root.idle();
    const [c] = w.t.h.store.children(w.root.id);
    const requests = w.server.requests.length;
    await w.t.h.close();

    const h2 = await Harness.open({ ...w.t.h.config, approvalPort: undefined });
    try {
      assert.deepEqual(h2.recovered, [], 'nothing was left open');
      const cs = await h2.store.inspect(c.id);
      assert.deepEqual(stopReasons(cs.events), ['interrupted']);
      const end = ofType(cs.events, 'turn/end')[0];
      assert.match(end.error ?? '', /Arbor closed during this turn/);
      const rs = await h2.store.inspect(w.root.id);
      const notices = ofType(rs.events, 'user/message').filter((e) => e.source.kind === 'subagent-settled' && e.source.fromSession === c.id);
      assert.equal(notices.length, 1);
      assert.equal(notices[0].source.kind === 'subagent-settled' && notices[0].source.stopReason, 'interrupted');
      assert.ok(!ofType(rs.events, 'inbox/accepted').some((e) => e.source.kind === 'subagent-settled'), 'recorded as history, not queued to run');
      assert.equal(w.server.requests.length, requests, 'nothing asked the model after the close');
    } finally {
      await h2.close();
    }
  });
});
