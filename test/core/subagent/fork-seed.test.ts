import assert from 'node:assert/strict';
import { Session } from '../../../src/core/session/session';
import type { ChatBody } from '../../support/model-server';
import { contents, ofType, subagentWorld } from './helpers';

const LONG_Q = `[[root]] first question ${'about the parser and its error recovery '.repeat(60)}`;
const LONG_A = `first answer ${'the parser recovers at statement boundaries '.repeat(60)}`;
const fork = (prompt: string) => ({ name: 'subagent_fork', arguments: { prompt } });

/** Characters of the server's cache text (tools + messages) covered by the first `n` messages. */
function prefixChars(body: ChatBody, n: number): number {
  return JSON.stringify(body.tools ?? []).length + JSON.stringify(body.messages.slice(0, n)).length - 1;
}

describe('subagent: fork seeds — whole turns only, the live boundary, compaction, the shared prefix', () => {
  const w = subagentWorld({}, { gates: false, perTest: true });

  async function forkSession(): Promise<Session> {
    const [child] = w.t.h.store.children(w.root.id);
    return Session.restore(child, await w.t.h.store.readEvents(child.id));
  }

  it('a fork called mid-turn gets the history up to the last finished turn, never the half turn', async () => {
    await w.setup();
    w.script.on(
      'root',
      { text: LONG_A },
      { toolCalls: [{ name: 'list_files', arguments: {} }] },
      { toolCalls: [fork('[[f]] side task')] },
      { text: 'root done' },
    );
    w.script.on('f', { text: 'fork answer' });
    await w.root.accept(LONG_Q);
    await w.root.idle();
    await w.root.accept('[[root]] second question');
    await w.t.h.settle();

    const f = await forkSession();
    const parent = w.root.session.events;
    const firstEnd = ofType(parent, 'turn/end')[0];
    assert.equal(f.header.origin, 'fork');
    assert.equal(f.seedLength, firstEnd.seq + 1);
    assert.equal(f.firstLiveSeq, f.seedLength + 1);
    assert.deepEqual(f.events.slice(0, f.seedLength), parent.slice(0, f.seedLength), 'the seed is the parent prefix, as it was');
    assert.equal(f.events[f.seedLength].type, 'session/end-seed');

    const halfTurn = ofType(parent, 'turn/start')[1].turnId;
    assert.ok(!f.events.some((e) => (e.type === 'turn/start' || e.type === 'turn/end') && e.turnId === halfTurn));
    assert.ok(!f.events.some((e) => e.type === 'user/message' && e.text === '[[root]] second question'));
    assert.ok(!f.events.some((e) => e.type === 'assistant/message' && e.toolCalls?.some((c) => c.name === 'list_files')));
    // Everything the child produced itself is live.
    for (const e of f.events.slice(f.seedLength + 1)) assert.ok(e.seq >= f.firstLiveSeq);
    assert.ok(ofType(f.events, 'subagent/descriptor').every((e) => e.seq >= f.firstLiveSeq));

    const [body] = w.script.bodies('f');
    assert.deepEqual(contents(body).slice(1, 3), [LONG_Q, LONG_A]);
    assert.equal(contents(body).length, 5, 'system, the whole first turn, the delegation notice, the fork prompt');
    assert.equal(contents(body).at(-1), '[[f]] side task');
  });

  it('a compaction before the fork: the fork sees the summary and the retained tail', async () => {
    await w.setup({ compaction: { thresholdTokens: 50, keepTurns: 1 } });
    w.script.on(
      'root',
      { text: LONG_A },
      { text: 'second answer' },
      { text: 'third answer' },
      { toolCalls: [fork('[[f]] from compacted history')] },
      { text: 'root done' },
    );
    for (const q of [LONG_Q, '[[root]] second question', '[[root]] third question']) {
      await w.root.accept(q);
      await w.root.idle();
    }
    assert.ok(w.root.session.events.some((e) => e.type === 'compaction/end' && e.outcome === 'committed'));
    await w.root.accept('[[root]] fork now');
    await w.t.h.settle();

    const f = await forkSession();
    assert.ok(
      ofType(f.events.slice(0, f.seedLength), 'compaction/end').some((e) => e.outcome === 'committed'),
      'the seed holds a committed compaction',
    );
    const surface = f.deriveMessages().map((m) => (m.role === 'user' || m.role === 'assistant' ? m.content : m.role));
    assert.match(surface[0], /^Summary of the earlier conversation \(compacted\):\nSUMMARY of the earlier work/);
    assert.ok(!surface.some((s) => s.startsWith('[[root]] first question')), 'the compacted turn is gone from the surface');
    assert.ok(surface.includes('[[root]] third question') && surface.includes('third answer'), 'the retained tail is there');
    const firstRequest = contents(w.script.bodies('f')[0]).slice(1);
    assert.equal(firstRequest.at(-1), '[[f]] from compacted history');
    assert.deepEqual(firstRequest, surface.slice(0, firstRequest.length), 'the model saw exactly that surface');
    assert.equal(surface.at(-1), 'f finished');
    // The raw seed still has everything.
    assert.ok(f.events.some((e) => e.type === 'user/message' && e.text === LONG_Q));
  });

  it("the fork's first request head equals the parent's, and the server's prefix cache covers the inherited history", async () => {
    await w.setup();
    w.script.on('root', { text: LONG_A }, { toolCalls: [fork('[[f]] side task')] }, { text: 'root done' });
    w.script.on('f', { text: 'fork answer' });
    w.script.on('s', { text: 'spawn answer' });
    await w.root.accept(LONG_Q);
    await w.root.idle();
    await w.root.accept('[[root]] now fork');
    await w.t.h.settle();

    const f = await forkSession();
    const parentHeaders = ofType(w.root.session.events, 'request/header');
    const [forkHeader] = ofType(f.events.slice(f.firstLiveSeq), 'request/header');
    assert.equal(forkHeader.headHash, parentHeaders[1].headHash, 'model + tools + system are the parent bytes');
    assert.equal(forkHeader.model, parentHeaders[1].model);
    const [fBody] = w.script.bodies('f');
    const [rBody] = w.script.bodies('root');
    assert.deepEqual(fBody.tools, rBody.tools);
    assert.equal(fBody.messages[0].content, rBody.messages[0].content);

    const served = w.server.requests[w.script.indexes('f')[0]];
    const inherited = prefixChars(fBody, 3); // tools + system + the whole first turn
    assert.ok(served.cacheHitTokens >= Math.floor(inherited / 256) * 64, `hit ${served.cacheHitTokens} tokens for an inherited prefix of ${inherited} chars`);
    const usage = ofType(f.events, 'assistant/message').at(-1)!.usage!;
    assert.equal(usage.cacheHitTokens, served.cacheHitTokens, 'the log records what the server reported');

    // A spawned child of the same parent shares only the head, not the history.
    const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[s]] fresh task' });
    await run.result;
    await run.dispose();
    const spawnHit = w.server.requests[w.script.indexes('s')[0]].cacheHitTokens;
    assert.ok(
      served.cacheHitTokens - spawnHit >= Math.floor((LONG_Q.length + LONG_A.length) / 256) * 64 - 64,
      `fork ${served.cacheHitTokens} vs spawn ${spawnHit}`,
    );
  });
});
