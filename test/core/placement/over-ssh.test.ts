// A placed node over the real ssh transport (issue 26): the placement comes from the harness
// config as a deployment writes it (`placements`, decision 0071), the child's `arbor acp` runs
// behind a real sshd on 127.0.0.1 (throwaway keys), and the link is cut as a network would cut it:
// only the local ssh client dies, the other side is left to notice.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionEvent } from '../../../src/core/session/events';
import { filled } from '../../../src/core/worktree/filling';
import { arborBin } from '../../support/cli-bundle';
import { type Sshd, sshPlacement, startSshd } from '../../support/sshd';
import { eventsOf, ofType, stopReasons, subagentWorld, waitFor } from '../subagent/helpers';
import { makeRepo, read } from '../worktree/fixture';

const write = (p: string, content: string) => ({ toolCalls: [{ name: 'write_file', arguments: { path: p, content } }] });

/** The members of a process group that run `comm` (from /proc: the ssh client among the transport's processes). */
function membersNamed(pgid: number, comm: string): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fs.readFileSync(`/proc/${d}/comm`, 'utf8').trim() === comm) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

describe('placement: a placed node over a real sshd', function () {
  this.timeout(300_000);
  let sshd: Sshd;
  let base: string;
  let ws: string;
  const world = subagentWorld({}, { gates: false, perTest: true });
  const until = async (id: string, pred: (evs: SessionEvent[]) => boolean, what: string): Promise<SessionEvent[]> => {
    const end = Date.now() + 120_000;
    for (;;) {
      const evs = await eventsOf(world.t.h, id);
      if (pred(evs)) return evs;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what} (${id}: ${evs.map((e) => e.type).join(', ')})`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  before(async () => (sshd = await startSshd()));
  after(async () => sshd?.stop());
  beforeEach(async () => {
    base = fs.realpathSync(fs.mkdtempSync('/var/tmp/arbor-over-ssh-'));
    ws = makeRepo(base);
    const box = sshPlacement(sshd, {
      name: 'box',
      remoteDir: path.join(base, 'remote'),
      arbor: arborBin(),
      baseUrl: world.server.baseURL,
      model: 'test-model',
    });
    await world.setup({ workspace: [ws], storeDir: path.join(ws, '.arbor', 'store'), placements: [box] });
  });
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  it('the model places a child with placement "box": it runs over ssh, its descriptor says where, its change comes back and applies', async () => {
    world.script.on(
      'root',
      { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] write b.txt', label: 'afar', placement: 'box' } }] },
      { text: 'parent done' },
    );
    world.script.on('c', write('b.txt', 'over ssh\n'), { text: 'wrote b.txt' });
    const logins = () => (sshd.log().match(/Accepted publickey for /g) ?? []).length;
    const loginsBefore = logins();
    await world.root.accept('[[root]] place it');
    await world.t.h.settle();
    const [child] = world.t.h.store.children(world.root.id);
    assert.ok(child, 'a child in the tree');
    const evs = await until(child.id, (e) => ofType(e, 'turn/end').length >= 1, 'the placed turn');
    assert.deepEqual(stopReasons(evs), ['completed']);
    const d = ofType(evs, 'subagent/descriptor')[0];
    assert.equal(d.provider, 'placed:box');
    assert.equal(d.placement?.kind, 'ssh');
    assert.equal(d.placement?.where, `${sshd.user}@127.0.0.1:${sshd.port}`);
    assert.ok((d.placement?.rttMs ?? -1) >= 0);
    const place = ofType(evs, 'worktree')[0];
    await filled(place.path); // its files, written when asked for (decision 0093)
    assert.equal(read(path.join(place.root, 'b.txt')), 'over ssh\n', 'the change came back into its local worktree');
    assert.equal(fs.existsSync(path.join(ws, 'b.txt')), false, 'the parent checkout is untouched until the change is applied');
    // Counted, not assumed (decision 0081): the check and the kept connection; the workspace went there and came back on the latter.
    assert.equal(logins() - loginsBefore, 2, `two ssh logins for a placed child, its sync included (sshd said:\n${sshd.log().slice(-3000)})`);
    const applied = await world.t.h.worktrees.apply(child.id);
    assert.equal(applied.applied, true);
    assert.equal(read(path.join(ws, 'b.txt')), 'over ssh\n');
  });

  it('the ssh client killed mid-turn: interrupted with LINK_DROPPED; a follow-up reconnects over ssh, no history twice, completes', async () => {
    world.script.on('d', write('c.txt', 'first\n'), { text: 'never arrives', fault: { kind: 'stall', afterChunks: 1 } }, { text: 'finished after reconnect' });
    const started = await world.t.h.subagents.startContinuable(world.root, 'spawn', { prompt: '[[d]] write c.txt', placement: 'box' });
    const id = started.childId;
    await waitFor(() => world.script.bodies('d').length === 2, 'the stalled request', 120_000);
    const before = await until(id, (e) => ofType(e, 'tool/result').length === 1, 'the first tool result');
    const remote = ofType(before, 'subagent/remote')[0];
    assert.ok(remote?.pgid, 'the transport process is identified');
    const clients = membersNamed(remote.pgid!, 'ssh');
    assert.equal(clients.length, 1, 'one ssh client carries the link');
    process.kill(clients[0], 'SIGKILL');
    const dropped = await until(id, (e) => ofType(e, 'turn/end').length >= 1, 'the dropped turn to end');
    const end1 = ofType(dropped, 'turn/end')[0];
    assert.equal(end1.stopReason, 'interrupted');
    assert.match(end1.error ?? '', /^LINK_DROPPED: the link to .*127\.0\.0\.1.* dropped/s);
    await waitFor(() => !world.t.h.subagents.isRunning(id), 'the dropped turn to be over');
    await world.t.h.subagents.followup(null, id, '[[d]] go on');
    const evs = await until(id, (e) => ofType(e, 'turn/end').length >= 2, 'the follow-up turn to end');
    assert.deepEqual(stopReasons(evs), ['interrupted', 'completed'], JSON.stringify(ofType(evs, 'turn/end').map((e) => e.error)));
    assert.equal(ofType(evs, 'tool/result').length, 1, 'one tool result, not a replayed second');
    assert.equal(ofType(evs, 'subagent/remote').length, 1, 'the same remote session, loaded');
    const third = world.script.bodies('d')[2];
    assert.ok(
      third.messages.some((m) => String(m.content ?? '').includes('write c.txt')),
      'the reconnected session still has the first task',
    );
    const place = ofType(evs, 'worktree')[0];
    await filled(place.path); // its files, written when asked for (decision 0093)
    assert.equal(read(path.join(place.root, 'c.txt')), 'first\n', 'the change made before the cut came back');
  });
});
