import assert from 'node:assert/strict';
import { ANSWER_FIRST_BACKLOG } from '../../../src/core/agent/scheduling';
import { SessionWriter } from '../../../src/core/agent/session-writer';
import { Store } from '../../../src/core/store/store';
import type { SubagentRequest } from '../../../src/core/subagent/types';
import { arbor } from '../../support/cli';
import type { ChatBody } from '../../support/model-server';
import { assertCode, contents, delivered, eventsOf, lastToolJson, ofType, subagentWorld, systemOf, toolNames } from './helpers';

const PERSONA = 'You are PLUM-KEEPER, a terse helper that remembers words.';
const REQUEST: SubagentRequest = {
  prompt: '[[c]] remember the word PLUM',
  label: 'keeper',
  persona: { text: PERSONA },
  toolFilter: ['read_file'],
  model: 'child-model',
};

describe('subagent: cold resume of a released continuable child from its own log', () => {
  const w = subagentWorld({}, { gates: false });

  /** Start the child, let it settle and be released. */
  async function releasedChild(): Promise<string> {
    w.script.on('c', { text: 'noted PLUM' });
    const { childId } = await w.t.h.subagents.startContinuable(w.root, 'spawn', REQUEST);
    await w.t.h.settle();
    assert.equal(w.t.h.resident(childId), undefined, 'released after settling');
    assert.equal(w.t.h.subagents.isActive(childId), false);
    return childId;
  }

  function assertComposition(body: ChatBody, first: ChatBody): void {
    assert.equal(body.model, 'child-model');
    assert.deepEqual(toolNames(body), ['read_file', 'report']);
    assert.ok(systemOf(body).includes(PERSONA));
    assert.equal(systemOf(body), systemOf(first));
  }

  it('follow-up from the parent cold-resumes the child; the model sees its whole history; composition is reapplied', async () => {
    const childId = await releasedChild();
    const [first] = w.script.bodies('c');
    assertComposition(first, first);

    w.script.on('c', { text: 'the word was PLUM' });
    const r = await w.t.h.subagents.followup(w.root.id, childId, '[[c]] which word?');
    assert.equal(r.path, 'cold-resume');
    await w.t.h.settle();
    const second = w.script.bodies('c')[1];
    assert.deepEqual(contents(second).slice(1), [
      ofType(await eventsOf(w.t.h, childId), 'user/message')[0].text, // the delegation notice
      '[[c]] remember the word PLUM',
      'noted PLUM',
      '[[c]] which word?',
    ]);
    assertComposition(second, first);
    const evs = await eventsOf(w.t.h, childId);
    assert.ok(
      evs.some((e) => e.type === 'inbox/accepted' && e.messageId === r.messageId && e.source.kind === 'followup' && e.source.fromSession === w.root.id),
    );
    assert.equal(ofType(evs, 'assistant/message').at(-1)?.text, 'the word was PLUM');
    // Each Activation told the parent once.
    assert.equal(delivered(w.root.session.events, 'subagent-settled', childId).length, 2);
  });

  it('the parent model reaches a released child through send_message (delivered: cold-resume)', async () => {
    const childId = await releasedChild();
    w.script.on('root', { toolCalls: [{ name: 'send_message', arguments: { agentId: childId, message: '[[c]] again' } }] }, (body) => {
      const res = lastToolJson<{ delivered: string }>(body);
      return { text: `delivered via ${res.delivered}` };
    });
    w.script.on('c', { text: 'again: PLUM' });
    await w.root.accept('[[root]] ask the keeper');
    await w.t.h.settle();
    const result = ofType(w.root.session.events, 'tool/result').find((e) => e.name === 'send_message');
    assert.ok(result && !result.isError, result?.content);
    assert.equal(JSON.parse(result.content).delivered, 'cold-resume');
    const last = w.script.bodies('c').at(-1)!;
    assert.equal(contents(last).at(-1), '[[c]] again');
    assertComposition(last, w.script.bodies('c')[0]);
  });

  it('a new process (arbor send) reaches the child by cold resume and records its reply', async () => {
    const childId = await releasedChild();
    const first = w.script.bodies('c')[0];
    await w.t.h.close();
    w.script.on('c', { text: 'PLUM, from another process' });
    const before = w.server.requests.length;
    const run = await arbor(
      [
        'send',
        childId,
        '[[c]] which word, again?',
        '--store',
        w.t.storeDir,
        '--workspace',
        w.t.workspace,
        '--base-url',
        w.server.baseURL,
        '--model',
        'test-model',
      ],
      {},
      45_000,
    );
    assert.equal(run.code, 0, run.stderr);
    const childReqs = w.script.log.filter((l) => l.index >= before && l.tag === 'c').map((l) => l.body);
    assert.equal(childReqs.length, 1);
    assertComposition(childReqs[0], first);
    assert.deepEqual(contents(childReqs[0]).slice(2), ['[[c]] remember the word PLUM', 'noted PLUM', '[[c]] which word, again?']);

    const store = await Store.open(w.t.storeDir);
    try {
      const child = await store.inspect(childId);
      const replies = ofType(child.events, 'assistant/message');
      assert.equal(replies.at(-1)?.text, 'PLUM, from another process');
      assert.equal(replies.at(-1)?.model, 'child-model');
      assert.equal(ofType(child.events, 'turn/end').at(-1)?.stopReason, 'completed');
      // The other process's Activation settled too and told the (cold-opened) root.
      const rootLog = await store.readEvents(w.root.id);
      assert.equal(delivered(rootLog, 'subagent-settled', childId).length, 2);
    } finally {
      await store.close();
    }
  });

  it('two follow-ups at once to a released child resume it once and run as two FIFO turns', async () => {
    const childId = await releasedChild();
    w.script.on('c', { text: 'one' }, { text: 'two' });
    const [a, b] = await Promise.all([
      w.t.h.subagents.followup(w.root.id, childId, '[[c]] first'),
      w.t.h.subagents.followup(w.root.id, childId, '[[c]] second'),
    ]);
    assert.equal(a.path, 'cold-resume');
    assert.notEqual(a.messageId, b.messageId);
    await w.t.h.settle();
    const evs = await w.t.h.store.readEvents(childId);
    const users = ofType(evs, 'user/message').map((e) => e.text);
    assert.deepEqual(users.slice(-2), ['[[c]] first', '[[c]] second']);
    assert.deepEqual(
      ofType(evs, 'turn/end').map((e) => e.stopReason),
      ['completed', 'completed', 'completed'],
    );
    assert.deepEqual(
      evs.map((e) => e.seq),
      evs.map((_, i) => i),
    );
    assert.ok(b.path === 'inbox' || b.path === 'wake', b.path);
    // One Activation served both: one more settlement notice, not two.
    assert.equal(delivered(w.root.session.events, 'subagent-settled', childId).length, 2);
  });

  it('a follow-up to a child with a long history returns before the child builds its first request; the turn then runs (decision 0075)', async () => {
    const childId = await releasedChild();
    // History the resumed child must fold and serialize for its first request: past the backlog.
    const writer = new SessionWriter(await w.t.h.store.inspect(childId), w.t.h.store);
    const staged = Array.from({ length: ANSWER_FIRST_BACKLOG + 50 }, (_, i) =>
      writer.stage({ type: 'user/message', text: `note ${i}`, source: { kind: 'user' } }),
    );
    await Promise.all(staged);

    w.script.on('c', { text: 'read them all' });
    const r = await w.t.h.subagents.followup(w.root.id, childId, '[[c]] anything new?');
    assert.equal(r.path, 'cold-resume');
    // Answered first: the accept is durable, and the child has built and sent nothing yet.
    const child = w.t.h.resident(childId);
    assert.ok(child, 'resident after the cold resume');
    const after = child.session.events.slice(child.session.events.findIndex((e) => e.type === 'inbox/accepted' && e.messageId === r.messageId));
    assert.equal(ofType(after, 'request/header').length, 0, 'no request built before the follow-up returned');
    assert.equal(w.script.bodies('c').length, 1, 'only the first activation asked the model so far');
    await w.t.h.settle();
    const second = w.script.bodies('c')[1];
    assert.ok(second, 'the turn ran after the follow-up returned');
    assert.equal(contents(second).at(-1), '[[c]] anything new?');
    const evs = await eventsOf(w.t.h, childId);
    assert.equal(ofType(evs, 'assistant/message').at(-1)?.text, 'read them all');
  });

  it('refuses a follow-up from anyone but the direct parent (NOT_PARENT)', async () => {
    const childId = await releasedChild();
    const stranger = await w.t.h.createSession();
    const before = (await w.t.h.store.readEvents(childId)).length;
    await assert.rejects(w.t.h.subagents.followup(stranger.id, childId, 'hi'), assertCode('NOT_PARENT'));
    await assert.rejects(w.t.h.subagents.followup(childId, childId, 'hi'), assertCode('NOT_PARENT'));
    await assert.rejects(w.t.h.subagents.followup(w.root.id, `${w.root.id}.nope`, 'hi'), assertCode('UNKNOWN_CHILD'));
    assert.equal((await w.t.h.store.readEvents(childId)).length, before);
    assert.equal(w.t.h.resident(childId), undefined, 'a refused follow-up does not resume the child');
  });

  it('refuses a follow-up to a one-shot child (NOT_CONTINUABLE), resident or not', async () => {
    const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[o]] once' });
    await run.result;
    await assert.rejects(w.t.h.subagents.followup(w.root.id, run.id, 'more'), assertCode('NOT_CONTINUABLE'));
    await run.dispose();
    const before = (await w.t.h.store.readEvents(run.id)).length;
    await assert.rejects(w.t.h.subagents.followup(w.root.id, run.id, 'more'), assertCode('NOT_CONTINUABLE'));
    assert.equal((await w.t.h.store.readEvents(run.id)).length, before);
    assert.equal(w.t.h.resident(run.id), undefined);
    assert.deepEqual(w.t.h.subagents.stats(), { activations: 0, oneShots: 0, timers: 0, background: 0 });
  });
});
