import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { SessionWriter } from '../../../src/core/agent/session-writer';
import type { SessionEvent, SessionHeader } from '../../../src/core/session/events';
import { Session } from '../../../src/core/session/session';
import { ownScopeOf } from '../../../src/core/subagent/composition';
import { assertCode, subagentWorld, waitFor } from './helpers';

const idle = { activations: 0, oneShots: 0, timers: 0, background: 0 };

describe('subagent: a continuable start resolves once the first message is durable; a failed publish leaves nothing', () => {
  const w = subagentWorld({}, { gates: false });

  /** Hold the store's publish of a new session until `open()`, or fail it with `fail(err)`. */
  function gatePublish() {
    const orig = w.t.h.store.createSession.bind(w.t.h.store);
    let open!: () => void;
    let fail!: (err: Error) => void;
    const gate = new Promise<void>((res, rej) => {
      open = res;
      fail = rej;
    });
    const seen: { header?: SessionHeader; events?: readonly SessionEvent[]; written: boolean } = { written: false };
    w.t.h.store.createSession = async (header, events) => {
      seen.header = header;
      seen.events = events;
      await gate;
      await orig(header, events);
      seen.written = true;
    };
    return { open, fail, seen };
  }

  it('does not resolve, publish or run the child before the store has acknowledged the session', async () => {
    const g = gatePublish();
    let atResolve: { written: boolean; listed: boolean } | undefined;
    const p = w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] first task', label: 'c' }).then((r) => {
      atResolve = { written: g.seen.written, listed: w.t.h.store.has(r.childId) };
      return r;
    });
    await waitFor(() => g.seen.header !== undefined, 'the publish to begin');
    for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
    assert.equal(atResolve, undefined, 'still waiting for the store');
    assert.equal(w.t.h.store.has(g.seen.header!.id), false);
    assert.equal(w.server.requests.length, 0, 'the child did not start its turn');
    // Everything the child starts with goes in the one durable write: setup, descriptor, first message.
    assert.deepEqual(
      g.seen.events!.map((e) => e.type),
      ['subagent/descriptor', 'user/message', 'inbox/accepted'],
    );

    g.open();
    const r = await p;
    assert.deepEqual(atResolve, { written: true, listed: true });
    const stored = await w.t.h.store.readEvents(r.childId);
    const accepted = stored.find((e) => e.type === 'inbox/accepted' && e.messageId === r.messageId);
    assert.ok(accepted && accepted.type === 'inbox/accepted');
    assert.equal(accepted.text, '[[c]] first task');
    assert.deepEqual(accepted.source, { kind: 'delegation', fromSession: w.root.id });
    await w.t.h.settle();
  });

  for (const mode of ['continuable', 'one-shot'] as const) {
    it(`${mode}: a publish failure rolls back: no session, no resident agent, no child-local tools`, async () => {
      const g = gatePublish();
      // A continuable child has `report` of its own (a schema is refused for it); a one-shot, submit_result.
      const start =
        mode === 'continuable'
          ? w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: 'x' })
          : w.t.h.subagents.start(w.root, 'spawn', { prompt: 'x', outputSchema: { type: 'object' } });
      await waitFor(() => g.seen.header !== undefined, 'the publish to begin');
      const childId = g.seen.header!.id;
      // While unpublished the child is built (resident) with its own tools; the failure must undo both.
      assert.ok(w.t.h.tools.view({ own: ownScopeOf(childId) }).some((x) => x.name === (mode === 'continuable' ? 'report' : 'submit_result')));
      g.fail(new Error('disk full (scripted)'));
      await assert.rejects(start, /disk full/);
      assert.deepEqual(
        w.t.h.store.list().map((h) => h.id),
        [w.root.id],
      );
      assert.equal(w.t.h.resident(childId), undefined);
      assert.equal(w.t.h.residentCount, 1);
      assert.deepEqual(w.t.h.subagents.stats(), idle);
      assert.deepEqual(
        w.t.h.tools.view({ own: ownScopeOf(childId) }).map((x) => x.name),
        w.t.h.tools.view({}).map((x) => x.name),
        'the child scope is gone',
      );
      assert.equal(w.server.requests.length, 0);
      assert.equal(w.root.session.length, 0);
    });
  }

  // The id is drawn again while a stored session has it (child-ids.ts): a random source that
  // repeats itself refuses the start after 64 draws, before the store is asked. The store's own
  // refusals (UNKNOWN_PARENT, CLOSED) are the two tests below.
  it('a child id that is always taken (the random source repeats itself) refuses the start and leaves the existing session untouched', async () => {
    const clashId = `${w.root.id}.aaaaaa`;
    await w.t.h.store.createSession({ id: clashId, createdAt: new Date().toISOString(), origin: 'subagent', parentSession: w.root.id, delegationDepth: 1 }, []);
    const c = crypto as { randomUUID: () => string };
    const real = c.randomUUID;
    c.randomUUID = () => 'aaaaaa00-0000-4000-8000-000000000000';
    let err: unknown;
    try {
      await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: 'x' });
    } catch (e) {
      err = e;
    } finally {
      c.randomUUID = real;
    }
    assert.ok(err, 'the start failed');
    assertCode('DUPLICATE_SESSION')(err);
    assert.match((err as Error).message, /random source repeats itself.*Nothing was created; retry/);
    assert.deepEqual(
      w.t.h.store
        .list()
        .map((h) => h.id)
        .sort(),
      [w.root.id, clashId].sort(),
    );
    assert.deepEqual(await w.t.h.store.readEvents(clashId), []);
    assert.equal(w.t.h.resident(clashId), undefined);
    assert.equal(w.t.h.residentCount, 1);
    assert.deepEqual(w.t.h.subagents.stats(), idle);
  });

  it('a parent the store does not know (UNKNOWN_PARENT) creates nothing', async () => {
    const ghost = w.t.h.makeResident(
      new SessionWriter(Session.create({ id: 'ghost', createdAt: new Date().toISOString(), origin: 'user', delegationDepth: 0 }), w.t.h.store),
    );
    const before = w.t.h.residentCount;
    await assert.rejects(w.t.h.subagents.startContinuable(ghost, 'spawn', { prompt: 'x' }), assertCode('UNKNOWN_PARENT'));
    assert.deepEqual(
      w.t.h.store.list().map((h) => h.id),
      [w.root.id],
    );
    assert.equal(w.t.h.residentCount, before);
    assert.deepEqual(w.t.h.subagents.stats(), idle);
  });

  it('a closed store refuses the start and no child stays resident', async () => {
    await w.t.h.store.close();
    await assert.rejects(w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: 'x' }), assertCode('CLOSED'));
    assert.equal(w.t.h.residentCount, 1);
    assert.deepEqual(w.t.h.subagents.stats(), idle);
  });
});
