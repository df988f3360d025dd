import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { harnessPerTest } from '../../support/harness';
import { journaled } from '../../support/journaled';

// Decision 0063, from the agent's side: a plain turn on an idle store costs at most two
// fdatasyncs (the accept with the turn's first facts and its request header; the reply with
// `turn/end`), a fan-out of 64 children costs well under one per five events, and still no
// fact is acted on before it is durable: the model hears a turn only once its facts are in
// the journal on disk.

describe('agent: group commit (decision 0063)', () => {
  const w = harnessPerTest({ maxConcurrentChildren: 8, releaseDelayMs: 0 });

  it('a plain turn on an idle store costs at most two fdatasyncs, and the model hears it only once its facts are on disk', async () => {
    const { h, storeDir } = w.t;
    const agent = await h.createSession();
    const seenOnDisk: string[][] = [];
    w.server.setFallback(() => {
      // The request is here: the turn's facts so far must be in the journal already.
      seenOnDisk.push(journaled(storeDir, agent.id, agent.id).map((e) => e.type));
      return { text: 'done' };
    });
    await agent.accept('warm up'); // the store's first write after open is not the idle case
    await agent.idle();
    for (let i = 0; i < 3; i++) {
      const before = h.store.stats();
      await agent.accept(`question ${i}`);
      await agent.idle();
      const after = h.store.stats();
      assert.equal(after.events - before.events, 7, 'accepted, claimed, turn/start, user/message, request/header, assistant/message, turn/end');
      assert.ok(after.syncs - before.syncs <= 2, `turn ${i}: ${after.syncs - before.syncs} fdatasyncs`);
    }
    assert.equal(seenOnDisk.length, 4);
    for (const types of seenOnDisk) {
      const turn = types.slice(types.lastIndexOf('inbox/accepted'));
      assert.deepEqual(turn, ['inbox/accepted', 'inbox/claimed', 'turn/start', 'user/message', 'request/header'], 'on disk when the request came');
    }
    const events = agent.session.events;
    assert.deepEqual(
      journaled(storeDir, agent.id, agent.id).map((e) => e.seq),
      events.map((e) => e.seq),
      'the whole log is in the journal',
    );
  });

  it('a turn with a tool step: the call is durable before the tool runs, the results share the next request header’s commit', async () => {
    const { h, storeDir, workspace } = w.t;
    fs.writeFileSync(path.join(workspace, 'a.txt'), 'hello\n');
    const agent = await h.createSession();
    w.server.setFallback(() => ({ text: 'warm' }));
    await agent.accept('warm up');
    await agent.idle();
    let atSecondRequest: string[] = [];
    w.server.setFallback((body) => {
      if (body.messages.at(-1)?.role !== 'tool') return { toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] };
      atSecondRequest = journaled(storeDir, agent.id, agent.id).map((e) => e.type);
      return { text: 'done' };
    });
    const before = h.store.stats();
    await agent.accept('read it');
    await agent.idle();
    const after = h.store.stats();
    assert.ok(after.syncs - before.syncs <= 4, `${after.syncs - before.syncs} fdatasyncs for a turn of two requests`);
    assert.deepEqual(atSecondRequest.slice(-3), ['assistant/message', 'tool/result', 'request/header'], 'the result is on disk before the model hears it');
  });

  it('a fan-out of 64 one-shot children costs fewer than 0.2 fdatasyncs per event', async () => {
    const { h } = w.t;
    const parent = await h.createSession();
    w.server.setFallback(() => ({ text: 'child done', delayMs: 5 }));
    await parent.accept('warm up');
    await parent.idle();
    const before = h.store.stats();
    const runs = await Promise.all(Array.from({ length: 64 }, (_, i) => h.subagents.start(parent, 'spawn', { prompt: `task ${i}` })));
    const results = await Promise.all(runs.map((r) => r.result));
    await Promise.all(runs.map((r) => r.dispose()));
    const after = h.store.stats();
    for (const r of results) assert.equal(r.stopReason, 'completed');
    const events = after.events - before.events;
    const syncs = after.syncs - before.syncs;
    assert.ok(events >= 64 * 8, `${events} events for 64 children`);
    assert.ok(syncs / events < 0.2, `${syncs} fdatasyncs for ${events} events (${(syncs / events).toFixed(3)} per event)`);
    for (const r of runs) assert.equal((await h.store.readEvents(r.id)).at(-1)?.type, 'turn/end', `${r.id} is whole on disk`);
  });
});
