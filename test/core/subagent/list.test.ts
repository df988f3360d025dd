import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Harness } from '../../../src/core/harness';
import { listAgents } from '../../../src/core/subagent/control';
import type { AgentListing } from '../../../src/core/subagent/types';
import { hold, ofType, subagentWorld, turnsEnded } from './helpers';

describe('subagent: list_agents shows descendants and survives unreadable logs', () => {
  const w = subagentWorld();

  it('status running / waiting / settled / failed, with provider, label, depth, stop reason, inbox, tokens and cache hits', async () => {
    // settled and failed: run to the end first.
    w.script.on('c', { toolCalls: [{ name: 'list_files', arguments: {} }] }, { text: 'C done' });
    w.script.on('d', { fault: { kind: 'status', status: 500 } });
    const c = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] task', label: 'settler' });
    const d = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[d]] task', label: 'failer' });
    await w.t.h.settle();
    // running (with a queued follow-up), waiting (idle, owns a live grandchild), a finished one-shot not yet disposed.
    w.script.on('a', { toolCalls: [hold('a')] });
    w.script.on('b', { toolCalls: [hold('b')] }, { text: 'B done' });
    w.script.on('g', { toolCalls: [hold('g')] });
    w.script.on('o', { text: 'O done' });
    const a = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[a]] task', label: 'runner' });
    await w.gates.whenHeld('a');
    await w.t.h.subagents.followup(w.root.id, a.childId, '[[a]] queued');
    const bb = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[b]] task', label: 'waiter' });
    await w.gates.whenHeld('b');
    const g = await w.t.h.subagents.startContinuable(w.t.h.resident(bb.childId)!, 'spawn', { prompt: '[[g]] leaf', label: 'grand' });
    await w.gates.whenHeld('g');
    w.gates.release('b');
    await turnsEnded(w.t.h.resident(bb.childId)!, 1);
    await w.t.h.resident(bb.childId)!.idle();
    const o = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[o]] task', label: 'once' });
    await o.result;
    await o.localAgent.idle();

    const list = await listAgents(w.t.h.subagents, w.root.id);
    const by = new Map(list.map((l) => [l.id, l]));
    assert.deepEqual(
      list.map((l) => l.id).sort(),
      [a.childId, bb.childId, c.childId, d.childId, o.id, g.childId].sort(),
      'every descendant, grandchildren included',
    );
    const pick = (id: string) => {
      const l = by.get(id)!;
      return { status: l.status, provider: l.provider, mode: l.mode, label: l.label, depth: l.depth, parent: l.parent, last: l.lastStopReason, inbox: l.inbox };
    };
    assert.deepEqual(pick(a.childId), {
      status: 'running',
      provider: 'spawn',
      mode: 'continuable',
      label: 'runner',
      depth: 1,
      parent: w.root.id,
      last: undefined,
      inbox: 1,
    });
    assert.deepEqual(pick(bb.childId), {
      status: 'waiting',
      provider: 'spawn',
      mode: 'continuable',
      label: 'waiter',
      depth: 1,
      parent: w.root.id,
      last: 'completed',
      inbox: 0,
    });
    assert.deepEqual(pick(g.childId), {
      status: 'running',
      provider: 'spawn',
      mode: 'continuable',
      label: 'grand',
      depth: 2,
      parent: bb.childId,
      last: undefined,
      inbox: 0,
    });
    assert.deepEqual(pick(c.childId), {
      status: 'settled',
      provider: 'spawn',
      mode: 'continuable',
      label: 'settler',
      depth: 1,
      parent: w.root.id,
      last: 'completed',
      inbox: 0,
    });
    assert.deepEqual(pick(d.childId), {
      status: 'failed',
      provider: 'spawn',
      mode: 'continuable',
      label: 'failer',
      depth: 1,
      parent: w.root.id,
      last: 'error',
      inbox: 0,
    });
    // Resident (its result not yet taken) is not waiting: it has no children (decision 0054).
    assert.equal(by.get(o.id)!.resident, true);
    assert.deepEqual(pick(o.id), {
      status: 'settled',
      provider: 'spawn',
      mode: 'one-shot',
      label: 'once',
      depth: 1,
      parent: w.root.id,
      last: 'completed',
      inbox: 0,
    });

    // Tokens and cache hits are what the server counted for that child's requests.
    const served = w.script.indexes('c').map((i) => w.server.requests[i]);
    assert.equal(served.length, 2);
    const tokens = by.get(c.childId)!.tokens!;
    assert.equal(
      tokens.prompt,
      served.reduce((n, r) => n + r.promptTokens, 0),
    );
    assert.equal(
      tokens.cacheHit,
      served.reduce((n, r) => n + r.cacheHitTokens, 0),
    );
    assert.ok(tokens.cacheHit > 0, 'the second request reused the first one prefix');
    assert.ok(tokens.completion > 0);
    // The failed request reported no usage: its prompt is estimated from its bytes, and said so.
    const failed = by.get(d.childId)!;
    assert.ok(failed.tokens!.prompt > 0 && failed.tokens!.completion === 0 && failed.tokens!.cacheHit === 0, JSON.stringify(failed.tokens));
    assert.equal(failed.tokensEstimated, true);
    assert.equal(by.get(c.childId)!.tokensEstimated, undefined);
    assert.equal(by.get(o.id)!.diagnostic, undefined);

    // The model sees the same through the tool.
    w.script.on('root', { toolCalls: [{ name: 'list_agents', arguments: {} }] }, { text: 'listed' });
    await w.root.accept('[[root]] what is running?');
    await turnsEnded(w.root, ofType(w.root.session.events, 'turn/end').length + 1);
    const r = ofType(w.root.session.events, 'tool/result').find((e) => e.name === 'list_agents')!;
    assert.ok(!r.isError, r.content);
    const seen = JSON.parse(r.content) as AgentListing[];
    assert.deepEqual(seen.map((l) => [l.id, l.status]).sort(), list.map((l) => [l.id, l.status]).sort());
    await o.dispose();
    w.gates.releaseAll();
    await w.t.h.settle();
  });

  for (const damage of ['missing', 'corrupt'] as const) {
    it(`a ${damage} tree file: descendants are listed with a diagnostic, not a crash; other trees stay usable`, async () => {
      w.script.on('c', { text: 'C done' });
      const c = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] task', label: 'kid' });
      await w.t.h.settle();
      const g = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[x]] task' });
      await w.t.h.settle();
      const other = await w.t.h.createSession();
      const oc = await w.t.h.subagents.startContinuable(other, 'spawn', { prompt: '[[y]] task', label: 'elsewhere' });
      await w.t.h.settle();
      const rootId = w.root.id;
      await w.t.h.close();

      const trees = path.join(w.t.storeDir, 'trees');
      for (const f of fs.readdirSync(trees).filter((f) => f.startsWith(`${rootId}.`))) {
        if (damage === 'missing') fs.rmSync(path.join(trees, f));
        else fs.writeFileSync(path.join(trees, f), 'this is not a sqlite file '.repeat(200));
      }

      const h2 = await Harness.open({ ...w.t.h.config });
      try {
        const list = await listAgents(h2.subagents, rootId);
        assert.deepEqual(list.map((l) => l.id).sort(), [c.childId, g.childId].sort());
        for (const l of list) {
          assert.equal(l.parent, rootId);
          assert.equal(l.depth, 1, 'from the catalog header');
          assert.match(l.diagnostic ?? '', /log unreadable/);
          assert.equal(l.status, undefined);
        }
        const fine = await listAgents(h2.subagents, other.id);
        assert.deepEqual(
          fine.map((l) => [l.id, l.status, l.label, l.diagnostic]),
          [[oc.childId, 'settled', 'elsewhere', undefined]],
        );
        // And a follow-up to an unreadable child says so instead of crashing.
        await assert.rejects(h2.subagents.followup(rootId, c.childId, 'hi'), /DESCRIPTOR|cannot be read/);
      } finally {
        await h2.close();
      }
    });
  }
});
