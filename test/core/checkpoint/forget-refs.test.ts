// A deletion's sweep knows which blobs the remaining sessions name without reading their logs
// (decision 0121): the index of `checkpoint/blob-refs.ts`, kept with every durable write and in
// `checkpoints/refs.json` for the next process. Real store, real files, real git, real turns
// through the test model server; the reads are counted on the store itself.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { blobId, readBlobSync } from '../../../src/core/checkpoint/objects';
import { shadowDirOf } from '../../../src/core/checkpoint/shadow';
import type { Harness } from '../../../src/core/harness';
import { makeHarness, type TestHarness } from '../../support/harness';
import { subagentWorld } from '../subagent/helpers';
import { checkpointsOf, startOf, write } from './fixture';

describe('checkpoints: a deletion’s sweep reads no other session’s log', () => {
  // A harness this test opened again closes before the world's cleanup removes the store under it.
  let extra: TestHarness | undefined;
  const w = subagentWorld(
    {},
    {
      beforeCleanup: async () => {
        await extra?.cleanup();
        extra = undefined;
      },
    },
  );
  const ws = () => fs.realpathSync(w.t.workspace);
  const file = (rel: string) => path.join(ws(), rel);
  const read = (rel: string) => (fs.existsSync(file(rel)) ? fs.readFileSync(file(rel), 'utf8') : null);
  const shadow = () => shadowDirOf(w.t.storeDir, ws());
  const refsFile = () => path.join(w.t.storeDir, 'checkpoints', 'refs.json');
  const has = (content: string) => readBlobSync(shadow(), blobId(Buffer.from(content))) !== undefined;

  async function turn(h: Harness, tag: string, ...steps: Parameters<typeof w.script.on>[1][]): Promise<string> {
    const a = await h.createSession({ title: tag });
    w.script.on(tag, ...steps, { text: 'done' });
    await a.accept(`[[${tag}]] go`);
    await h.settle();
    return a.id;
  }

  /** The harness closed (its index written; a second close does nothing) and the store opened again, as the next process does. */
  async function reopen(h: Harness): Promise<Harness> {
    await h.close();
    await extra?.cleanup();
    extra = await makeHarness(w.server, { workspace: [ws()], storeDir: w.t.storeDir });
    return extra.h;
  }

  /** Delete a session and wait for its sweep; the logs of other sessions read meanwhile, counted on the store. */
  async function forgetCounting(h: Harness, id: string): Promise<{ others: string[] }> {
    const store = h.store;
    const readEvents = store.readEvents;
    const gone = new Set([id, ...store.descendants(id).map((x) => x.id)]);
    const others: string[] = [];
    store.readEvents = (sid: string, from?: number) => {
      if (!gone.has(sid)) others.push(sid);
      return readEvents.call(store, sid, from);
    };
    try {
      await h.deleteSession(id);
      const f = await h.whenForgotten();
      assert.equal(f?.failed.length, 0, JSON.stringify(f));
    } finally {
      store.readEvents = readEvents;
    }
    return { others };
  }

  /** Every blob a listed session's checkpoint events name is in the shadow, readable. */
  async function intact(h: Harness): Promise<void> {
    for (const s of h.store.list()) {
      for (const e of checkpointsOf(await h.store.readEvents(s.id)))
        for (const c of e.changes)
          for (const id of [c.before, c.after]) if (id) assert.ok(readBlobSync(shadow(), id), `${s.id} names ${id} (${path.basename(c.path)}): it stays`);
    }
  }

  it('attack: blobs shared by content and by a fork’s seed stay while any session names them, also from an index file that lags', async () => {
    fs.writeFileSync(file('s.txt'), 'orig\n');
    const a = await turn(w.t.h, 'a', { toolCalls: [write('s.txt', 'shared bytes\n'), write('only-a.txt', 'only A\n')] });
    const b = await turn(w.t.h, 'b', { toolCalls: [write('t.txt', 'shared bytes\n')] });
    // A fork copies A's checkpoint events into its own log (its seed): it names A's blobs too.
    const f = await w.t.h.forkSession(a, (await w.t.h.store.length(a)) - 1);
    assert.ok(checkpointsOf(f.session.events).length > 0, 'the fork’s seed holds A’s checkpoint events');
    // The index as the next process finds it; then B writes once more, and the file is put back as
    // it was (a kill before it was written again): it lags B's log by a turn.
    let h = await reopen(w.t.h);
    const lagging = fs.readFileSync(refsFile());
    w.script.on('b2', { toolCalls: [write('late-b.txt', 'B later\n')] }, { text: 'done' });
    await h.send(b, '[[b2]] more');
    await h.settle();
    await h.close();
    fs.writeFileSync(refsFile(), lagging);
    h = await reopen(h);
    // The fork goes: every blob A and B name stays, though the fork named them all.
    const first = await forgetCounting(h, f.id);
    await intact(h);
    assert.ok(has('orig\n') && has('shared bytes\n') && has('only A\n') && has('B later\n'));
    assert.deepEqual(first.others, [b], 'only B’s log, whose end the file lacks, was read');
    // A goes: the bytes B wrote too stay, A's own go.
    const second = await forgetCounting(h, a);
    await intact(h);
    assert.deepEqual(second.others, [], 'the index is whole now: no log read');
    assert.equal(has('shared bytes\n'), true, 'B names the same bytes: they stay');
    assert.equal(has('B later\n'), true, 'B’s turn after the file was written: its blob stays');
    assert.equal(has('only A\n'), false, 'only A named it: removed');
    assert.equal(has('orig\n'), false, 'A’s before: removed');
    // B's rewind still finds what it needs.
    const plan = await h.checkpoints.plan({ sessionId: b, toSeq: await startOf(h, b) });
    assert.ok(
      plan.files.every((x) => x.conflict?.reason !== 'unavailable'),
      JSON.stringify(plan.files.map((x) => [x.relative, x.conflict])),
    );
    await h.checkpoints.apply(plan);
    assert.equal(read('t.txt'), null, 'B’s rewind removed what it made');
    assert.equal(read('late-b.txt'), null);
  });

  it('a deletion in a store of many sessions reads no other log: in this process, in the next, and after an index lost', async () => {
    const a = await turn(w.t.h, 'a', { toolCalls: [write('a.txt', 'A’s\n')] });
    const b = await turn(w.t.h, 'b', { toolCalls: [write('b.txt', 'B’s\n')] });
    const forks: string[] = [];
    for (let i = 0; i < 8; i++) forks.push((await w.t.h.forkSession(a, (await w.t.h.store.length(a)) - 1)).id);
    for (let i = 0; i < 4; i++) await turn(w.t.h, `p${i}`, { toolCalls: [write(`p${i}.txt`, `${i}\n`)] });
    const n = w.t.h.store.list().length;
    assert.ok(n >= 15, `${n} sessions`);

    assert.deepEqual((await forgetCounting(w.t.h, forks[0])).others, [], 'in the process that recorded them');
    let h = await reopen(w.t.h);
    assert.deepEqual((await forgetCounting(h, forks[1])).others, [], 'in the next process: from the index file');
    assert.deepEqual((await forgetCounting(h, b)).others, []);
    assert.equal(has('B’s\n'), false, 'B’s blob went');
    assert.equal(has('A’s\n'), true, 'A and its forks name theirs');
    await intact(h);
    // The index file lost (an older store, a disk that dropped it): the first deletion reads every
    // remaining log once (the counter sees reads), then none again.
    await h.close();
    fs.rmSync(refsFile());
    h = await reopen(h);
    const lost = await forgetCounting(h, forks[2]);
    assert.equal(new Set(lost.others).size, h.store.list().length, 'without the file every remaining log is read once');
    assert.deepEqual((await forgetCounting(h, forks[3])).others, []);
    await intact(h);
  });

  it('a close after turns that named no blob leaves the index file as it is; the next sweep reads only what it lacks and writes it', async () => {
    const a = await turn(w.t.h, 'a', { toolCalls: [write('a.txt', 'A’s\n')] });
    const spare = await turn(w.t.h, 'spare', { toolCalls: [write('spare.txt', 'spare\n')] });
    let h = await reopen(w.t.h);
    const written = () => {
      const st = fs.statSync(refsFile());
      return { ino: st.ino, mtimeMs: st.mtimeMs, text: fs.readFileSync(refsFile(), 'utf8') };
    };
    const first = written();
    assert.ok(JSON.parse(first.text).sessions[a], 'the close after a turn that named a blob wrote the index');
    // Turns that name no blob: a plain answer in A, a new conversation with one.
    w.script.on('plain', { text: 'just words' });
    await h.send(a, '[[plain]] talk');
    await h.settle();
    const b = await turn(h, 'b-plain');
    h = await reopen(h);
    assert.deepEqual(written(), first, 'the close wrote nothing: same file (inode, time, text)');
    h = await reopen(h);
    assert.deepEqual(written(), first, 'nor the next one');
    // What the lag costs: the sweep reads A's new events and B's log (it has no entry), nothing else; all blobs named stay.
    const swept = await forgetCounting(h, spare);
    assert.deepEqual(new Set(swept.others), new Set([a, b]));
    await intact(h);
    assert.equal(has('A’s\n'), true);
    assert.equal(has('spare\n'), false, 'the deleted session’s blob went');
    const afterSweep = written();
    assert.notEqual(afterSweep.ino, first.ino, 'the sweep wrote the index');
    assert.equal(JSON.parse(afterSweep.text).sessions[b].n, await h.store.length(b), 'with every watermark');
    // A turn that names a blob: its close writes the index again.
    w.script.on('a2', { toolCalls: [write('a2.txt', 'A again\n')] }, { text: 'done' });
    await h.send(a, '[[a2]] more');
    await h.settle();
    h = await reopen(h);
    const last = written();
    assert.notEqual(last.ino, afterSweep.ino, 'a close after a blob was named writes it');
    assert.equal(JSON.parse(last.text).sessions[a].n, await h.store.length(a));
    assert.deepEqual((await forgetCounting(h, b)).others, [], 'and the next process reads no log');
  });

  for (const at of ['unlink', 'refs'] as const) {
    it(`a kill -9 ${at === 'unlink' ? 'after the sweep’s first removal' : 'before the index file is renamed'}: every named blob intact, the next sweep removes the rest, no log read`, async () => {
      fs.writeFileSync(file('s.txt'), 'orig\n');
      const a = await turn(w.t.h, 'a', {
        toolCalls: [write('s.txt', 'mid\n'), write('only-a.txt', 'only A wrote this\n'), write('only-a2.txt', 'only A again\n')],
      });
      const b = await turn(w.t.h, 'b', { toolCalls: [write('s.txt', 'late\n')] });
      const storeDir = w.t.storeDir;
      await w.t.h.close();

      const host = spawn(process.execPath, [path.join(__dirname, '..', '..', 'support', 'crash-forget-host.js'), storeDir, ws(), w.server.baseURL, a, at], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      host.stdout.on('data', (d: Buffer) => (out += d.toString()));
      const signal = await new Promise((r) => host.once('exit', (_code, sig) => r(sig)));
      assert.equal(signal, 'SIGKILL', `killed in the sweep: ${out}`);
      const left = ['orig\n', 'only A wrote this\n', 'only A again\n'].filter(has);
      if (at === 'unlink') assert.equal(left.length, 2, `the sweep was cut after one removal: ${left}`);
      else assert.equal(left.length, 0, 'the sweep had ended');
      assert.ok(JSON.parse(fs.readFileSync(refsFile(), 'utf8')).sessions[a], 'the index file is the one before the deletion: it still names A');

      extra = await makeHarness(w.server, { workspace: [ws()], storeDir });
      const h = extra.h;
      assert.equal(h.store.has(a), false, 'the deletion was durable');
      await intact(h);
      const c = await turn(h, 'c', { toolCalls: [write('c.txt', 'c\n')] });
      assert.deepEqual((await forgetCounting(h, c)).others, [], 'the file before the kill still serves: no log read');
      for (const x of ['orig\n', 'only A wrote this\n', 'only A again\n', 'c\n']) assert.equal(has(x), false, `${x.trim()} went with the next sweep`);
      assert.equal(has('mid\n'), true, 'B’s before stays');
      await intact(h);
      const plan = await h.checkpoints.plan({ sessionId: b, toSeq: await startOf(h, b) });
      await h.checkpoints.apply(plan);
      assert.equal(read('s.txt'), 'mid\n', 'B’s rewind works');
    });
  }
});
