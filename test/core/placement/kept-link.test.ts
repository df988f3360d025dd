// A placement's kept connection (decision 0077): one `arbor acp` process per placement carries
// every child placed there as a session of its own. Real parts throughout: this repository's
// `arbor acp` started by the local transport, the scripted model server, real git. What must hold:
// children share one process; cancelling one leaves the others running; a cut link ends every
// turn on it interrupted with LINK_DROPPED, and each child reconnects on its own.
import assert from 'node:assert/strict';
import { placedProvider } from '../../../src/core/placement/placed-provider';
import { PlacementError, type PlacementInfo, type PlacementTransport } from '../../../src/core/placement/types';
import { groupAlive } from '../../../src/core/process/group';
import type { SessionEvent } from '../../../src/core/session/events';
import { ofType, stopReasons, waitFor } from '../subagent/helpers';
import { placedWorld, untilLog } from './fixture';

const ended = (n: number) => (evs: SessionEvent[]) => ofType(evs, 'turn/end').length >= n;
const stall = { text: 'never arrives', fault: { kind: 'stall' as const, afterChunks: 1 } };

describe("placement: a placement's kept connection", function () {
  this.timeout(180_000);
  const w = placedWorld();

  const remoteOf = async (id: string) =>
    ofType(await untilLog(w, id, (e) => ofType(e, 'subagent/remote').length === 1, 'the remote session'), 'subagent/remote')[0]!;

  it('two children of one placement are two sessions on one arbor acp process; a later child reuses it', async () => {
    w.script.on('a', { text: 'a done', delayMs: 300 });
    w.script.on('b', { text: 'b done', delayMs: 300 });
    w.script.on('c', { text: 'c done' });
    const [ra, rb] = await Promise.all([
      w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[a]] go', placement: 'far' }),
      w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[b]] go', placement: 'far' }),
    ]);
    const [a, b] = await Promise.all([ra.result, rb.result]);
    assert.equal(a.stopReason, 'completed', a.error);
    assert.equal(b.stopReason, 'completed', b.error);
    assert.equal(a.text, 'a done');
    assert.equal(b.text, 'b done');
    const [xa, xb] = [await remoteOf(ra.id), await remoteOf(rb.id)];
    assert.ok(xa.pgid, 'the process is identified');
    assert.equal(xa.pgid, xb.pgid, 'one process carries both');
    assert.notEqual(xa.externalId, xb.externalId, 'each child is a session of its own there');
    assert.equal(w.far.counts.process, 0, 'no process per turn');
    assert.equal(w.far.counts.prepare, 2, 'each child still gets its own copy of the workspace');
    await Promise.all([ra.dispose(), rb.dispose()]);
    const rc = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[c]] go', placement: 'far' });
    assert.equal((await rc.result).stopReason, 'completed');
    assert.equal((await remoteOf(rc.id)).pgid, xa.pgid, 'a later child takes the same connection');
    await rc.dispose();
  });

  it('stopping one child cancels only its session: the other child on the same connection runs on and completes', async () => {
    w.script.on('s', stall);
    w.script.on('k', { text: 'kept going', delayMs: 2500 });
    const s = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[s]] wait', placement: 'far' });
    await waitFor(() => w.script.bodies('s').length === 1, 'the stalled request', 60_000);
    const k = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[k]] work', placement: 'far' });
    await waitFor(() => w.script.bodies('k').length === 1, "the other child's request", 60_000);
    const pgid = (await remoteOf(s.childId)).pgid!;
    assert.equal((await remoteOf(k.childId)).pgid, pgid, 'both on one connection');
    const stopped = await w.t.h.interruptSubtree(s.childId);
    assert.deepEqual(stopped, [s.childId], 'only the one child was stopped');
    const se = ofType(await untilLog(w, s.childId, ended(1), 'the stopped turn'), 'turn/end')[0]!;
    assert.equal(se.stopReason, 'interrupted');
    assert.doesNotMatch(se.error ?? '', /LINK_DROPPED/);
    const ke = await untilLog(w, k.childId, ended(1), "the other child's turn");
    assert.deepEqual(stopReasons(ke), ['completed'], JSON.stringify(ofType(ke, 'turn/end')));
    assert.equal(ofType(ke, 'assistant/message').at(-1)?.text, 'kept going');
    assert.ok(groupAlive(pgid), 'the connection lives on');
  });

  it('a cut link ends every turn on it interrupted with LINK_DROPPED; each child reconnects on a new connection with session/load, no history twice', async () => {
    w.script.on('x', stall, { text: 'x again' });
    w.script.on('y', stall, { text: 'y again' });
    const x = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[x]] wait', placement: 'near' });
    const y = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[y]] wait', placement: 'near' });
    await waitFor(() => w.script.bodies('x').length === 1 && w.script.bodies('y').length === 1, 'both stalled requests', 60_000);
    const pgid = (await remoteOf(x.childId)).pgid!;
    assert.equal((await remoteOf(y.childId)).pgid, pgid);
    process.kill(-pgid, 'SIGKILL');
    for (const id of [x.childId, y.childId]) {
      const end = ofType(await untilLog(w, id, ended(1), 'the dropped turn'), 'turn/end')[0]!;
      assert.equal(end.stopReason, 'interrupted', id);
      assert.match(end.error ?? '', /^LINK_DROPPED: the link to local:.*near dropped: /s);
    }
    for (const id of [x.childId, y.childId]) await waitFor(() => !w.t.h.subagents.isRunning(id), 'the dropped turn to be over');
    const asked = new Map<string, number>();
    for (const id of [x.childId, y.childId]) asked.set(id, ofType(await untilLog(w, id, ended(1), 'the log'), 'user/message').length);
    await w.t.h.subagents.followup(null, x.childId, '[[x]] go on');
    await w.t.h.subagents.followup(null, y.childId, '[[y]] go on');
    for (const [id, text] of [
      [x.childId, 'x again'],
      [y.childId, 'y again'],
    ] as const) {
      const evs = await untilLog(w, id, ended(2), 'the follow-up turn');
      assert.deepEqual(stopReasons(evs), ['interrupted', 'completed'], JSON.stringify(ofType(evs, 'turn/end').map((e) => e.error)));
      assert.equal(ofType(evs, 'subagent/remote').length, 1, 'the same remote session, loaded');
      assert.equal(ofType(evs, 'assistant/message').filter((e) => e.text === text).length, 1);
      assert.equal(ofType(evs, 'user/message').length, asked.get(id)! + 1, 'the follow-up alone, nothing replayed');
    }
    assert.ok(!groupAlive(pgid));
    assert.equal(w.near.counts.process, 0, 'no process per turn');
  });

  it("children started within a minute share the placement's check (a connection of its own); a failed check is not reused", async () => {
    let calls = 0;
    let fail = false;
    const counted: PlacementTransport = {
      ...w.far,
      check: async (signal) => {
        calls++;
        if (fail) throw new PlacementError('UNREACHABLE', 'cannot reach it');
        return w.far.check(signal);
      },
    };
    const p = placedProvider(counted, () => []);
    const [a, b] = await Promise.all([p.placement.check(), p.placement.check()]);
    await p.placement.check();
    assert.equal(calls, 1, 'one check for three starts');
    assert.deepEqual(a, b);
    const q = placedProvider(counted, () => []);
    fail = true;
    await assert.rejects(q.placement.check(), /UNREACHABLE/);
    fail = false;
    await q.placement.check();
    assert.equal(calls, 3, 'the failed check was made again');
    await Promise.all([p.cleanup(), q.cleanup()]);
  });

  it('one child stopped while the shared check runs ends its own wait only; the check stops when every child waiting on it has gone', async () => {
    const seen: AbortSignal[] = [];
    let answer: (i: PlacementInfo) => void = () => undefined;
    const slow: PlacementTransport = {
      ...w.far,
      check: (signal) => {
        seen.push(signal!);
        return new Promise<PlacementInfo>((resolve, reject) => {
          answer = resolve;
          signal?.addEventListener('abort', () => reject(new PlacementError('UNREACHABLE', 'stopped')), { once: true });
        });
      },
    };
    const p = placedProvider(slow, () => []);
    const first = new AbortController();
    const second = new AbortController();
    const a = p.placement.check(first.signal);
    const b = p.placement.check(second.signal);
    assert.equal(seen.length, 1, 'one check for both');
    first.abort();
    await assert.rejects(a, 'the stopped child stops waiting at once');
    assert.equal(seen[0]!.aborted, false, "its sibling's check goes on");
    const info: PlacementInfo = { name: 'far', kind: 'ssh', where: 'there', rttMs: 1 };
    answer(info);
    assert.deepEqual(await b, info, 'the sibling gets the answer');
    // A check every waiting child left is stopped, and the next child makes a new one.
    const q = placedProvider(slow, () => []);
    const only = new AbortController();
    const c = q.placement.check(only.signal);
    only.abort();
    await assert.rejects(c);
    assert.equal(seen[1]!.aborted, true, 'nobody waits on it: the check (its ssh login) is stopped');
    const d = q.placement.check();
    assert.equal(seen.length, 3, 'a stopped check is not reused');
    answer(info);
    assert.deepEqual(await d, info);
    await Promise.all([p.cleanup(), q.cleanup()]);
  });
});
