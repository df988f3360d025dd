import assert from 'node:assert/strict';
import type { SessionHeader } from '../../../src/core/session/events';
import { descriptorOf } from '../../../src/core/session/folds';
import { Session } from '../../../src/core/session/session';
import { ownScopeOf } from '../../../src/core/subagent/composition';
import { listAgents } from '../../../src/core/subagent/control';
import { SubagentError } from '../../../src/core/subagent/types';
import { assertCode, hold, ofType, subagentWorld, toolNames } from './helpers';

const idle = { activations: 0, oneShots: 0, timers: 0, background: 0 };

describe('subagent: the descriptor is folded from the child log suffix after its seed', () => {
  const w = subagentWorld();

  /** A refused resume touched nothing: no event, no resident agent, no Activation, no scope. */
  async function untouched(id: string, length: number): Promise<void> {
    assert.equal((await w.t.h.store.readEvents(id)).length, length);
    assert.equal(w.t.h.resident(id), undefined);
    assert.deepEqual(w.t.h.subagents.stats(), idle);
    assert.deepEqual(
      w.t.h.tools.view({ own: ownScopeOf(id) }).map((x) => x.name),
      w.t.h.tools.view({}).map((x) => x.name),
    );
  }

  it('a child log without a descriptor cannot be followed up: a clear DESCRIPTOR error, nothing resumed', async () => {
    const header: SessionHeader = {
      id: `${w.root.id}.nodesc`,
      createdAt: new Date().toISOString(),
      origin: 'subagent',
      parentSession: w.root.id,
      delegationDepth: 1,
    };
    const s = Session.create(header);
    s.append({ type: 'inbox/accepted', messageId: 'm1', text: 'task', source: { kind: 'delegation', fromSession: w.root.id } });
    s.append({ type: 'inbox/claimed', messageId: 'm1' });
    s.append({ type: 'turn/start', turnId: 't1' });
    s.append({ type: 'user/message', text: 'task', source: { kind: 'delegation', fromSession: 'parent' }, messageId: 'm1' });
    s.append({ type: 'assistant/message', text: 'did it', model: 'test-model' });
    s.append({ type: 'turn/end', turnId: 't1', stopReason: 'completed' });
    await w.t.h.store.createSession(header, s.events);

    for (const send of [() => w.t.h.subagents.followup(w.root.id, header.id, 'more'), () => w.t.h.subagents.followup(null, header.id, 'more')]) {
      await assert.rejects(send(), (err: unknown) => {
        assert.ok(err instanceof SubagentError);
        assert.equal(err.code, 'DESCRIPTOR');
        assert.ok(err.message.includes(header.id));
        assert.match(err.message, /no subagent descriptor after its seed/);
        return true;
      });
      await untouched(header.id, 6);
    }
    assert.equal(w.server.requests.length, 0);

    // The model gets it as a tool error it can act on.
    w.script.on('root', { toolCalls: [{ name: 'send_message', arguments: { agentId: header.id, message: 'more' } }] }, { text: 'ok' });
    await w.root.accept('[[root]] message it');
    await w.t.h.settle();
    const r = ofType(w.root.session.events, 'tool/result')[0];
    assert.ok(r.isError);
    assert.match(r.content, /^send_message: DESCRIPTOR: /);
    await untouched(header.id, 6);
  });

  it("a fork seeded with a continuable child's descriptor but none of its own is not resumed with the ancestor's", async () => {
    w.script.on('c', { text: 'C first turn' });
    const c = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] task', label: 'C-label', persona: { text: 'C persona' } });
    await w.t.h.settle();
    const cEvents = await w.t.h.store.readEvents(c.childId);
    const lastEnd = ofType(cEvents, 'turn/end').at(-1)!.seq;
    const seed = cEvents.slice(0, lastEnd + 1);
    assert.equal(ofType(seed, 'subagent/descriptor')[0].mode, 'continuable', 'the seed does hold the ancestor descriptor');

    const header = { id: `${c.childId}.crafted`, createdAt: new Date().toISOString(), origin: 'fork' as const, parentSession: c.childId, delegationDepth: 2 };
    const fork = Session.fromSeed(header, seed);
    await w.t.h.store.createSession(fork.header, fork.events);
    assert.equal(descriptorOf(fork.header, fork.events), undefined);
    await assert.rejects(w.t.h.subagents.followup(c.childId, header.id, 'go on'), assertCode('DESCRIPTOR'));
    await untouched(header.id, fork.events.length);
  });

  it('a real fork of a continuable child carries its own descriptor: one-shot, provider fork, its own label', async () => {
    w.script.on('c', { text: 'C first turn' }, { toolCalls: [hold('c')] }, { text: 'C done' });
    w.script.on('f', { text: 'F answer' });
    const c = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] task', label: 'C-label', persona: { text: 'C persona' } });
    await w.t.h.settle();
    await w.t.h.subagents.followup(w.root.id, c.childId, '[[c]] now fork');
    await w.gates.whenHeld('c');
    const run = await w.t.h.subagents.start(w.t.h.resident(c.childId)!, 'fork', { prompt: '[[f]] side task', label: 'F-label' });
    assert.equal((await run.result).stopReason, 'completed');
    const f = run.localAgent.session;
    const seedDescriptor = ofType(f.events.slice(0, f.seedLength), 'subagent/descriptor');
    assert.equal(seedDescriptor.length, 1);
    assert.equal(seedDescriptor[0].mode, 'continuable');
    const own = descriptorOf(f.header, f.events)!;
    assert.ok(own.seq >= f.firstLiveSeq);
    assert.deepEqual([own.mode, own.provider, own.label, own.persona], ['one-shot', 'fork', 'F-label', undefined]);
    assert.ok(!toolNames(w.script.bodies('f')[0]).includes('report'), 'not composed as the continuable ancestor');
    await run.dispose();

    await assert.rejects(w.t.h.subagents.followup(c.childId, run.id, 'more'), assertCode('NOT_CONTINUABLE'));
    const listed = (await listAgents(w.t.h.subagents, c.childId)).find((l) => l.id === run.id)!;
    assert.deepEqual([listed.provider, listed.mode, listed.label, listed.depth], ['fork', 'one-shot', 'F-label', 2]);
    w.gates.release('c');
    await w.t.h.settle();
  });

  it("records the child's model provider and model (seed 000 §六): the deployment's client and the parent's model, or the one asked for", async () => {
    w.script.on('o', { text: 'o done' });
    w.script.on('c', { text: 'c done' });
    const once = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[o]] task' });
    await once.result;
    await once.dispose();
    const c = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] task', model: 'special-model' });
    await w.t.h.settle();
    const provider = w.root.modelProvider;
    assert.equal(provider, 'openai-compatible', "the harness's own client");
    const [o] = ofType(await w.t.h.store.readEvents(once.id), 'subagent/descriptor');
    assert.deepEqual([o.modelProvider, o.model], [provider, w.root.modelName]);
    const [d] = ofType(await w.t.h.store.readEvents(c.childId), 'subagent/descriptor');
    assert.deepEqual([d.modelProvider, d.model], [provider, 'special-model']);
  });
});
