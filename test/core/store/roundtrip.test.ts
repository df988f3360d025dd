import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionEvent, SessionHeader } from '../../../src/core/session/events';
import { Session } from '../../../src/core/session/session';
import { Store, StoreError, type StoreErrorCode } from '../../../src/core/store';
import { parseOwner } from '../../../src/core/store/lock-owner';
import { countSyncs } from '../../support/file-syncs';
import { CRASH_SESSIONS, childHeader, closeAsIfKilled, eventAt, eventsFor, rootHeader, storeFolderPerTest } from '../../support/store-fixtures';

// DESIGN §2–3: sessions (header + contiguous events) go in, the same come out, across
// close and reopen and across a process that never closes; refusals are StoreErrors a user
// can act on and leave the store as it was; one writer per folder.

const STORE_MODULE = path.join(__dirname, '..', '..', '..', 'src', 'core', 'store');
const WRITER = path.join(__dirname, '..', '..', 'support', 'crash-writer.js');

/** Assert `p` rejects with a StoreError of `code` whose message matches every pattern. */
async function rejectsWith(p: Promise<unknown>, code: StoreErrorCode, ...patterns: RegExp[]): Promise<StoreError> {
  let caught: unknown;
  await assert.rejects(p, (err: unknown) => ((caught = err), true));
  assert.ok(caught instanceof StoreError, `expected a StoreError, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  for (const re of patterns) assert.match(caught.message, re);
  return caught;
}

const byId = (a: SessionHeader, b: SessionHeader) => a.id.localeCompare(b.id);

/** Everything a reader can see: the headers and every session's events. */
async function contents(store: Store): Promise<{ headers: SessionHeader[]; events: Record<string, SessionEvent[]> }> {
  const headers = store.list().sort(byId);
  const events: Record<string, SessionEvent[]> = {};
  for (const h of headers) events[h.id] = await store.readEvents(h.id);
  return { headers, events };
}

describe('store: round trip', () => {
  const tmp = storeFolderPerTest();
  const { openStore } = tmp;

  describe('sessions in, the same sessions out', () => {
    const root = rootHeader('root');
    const child = childHeader('root.child-1', 'root');
    const grandchild = childHeader('gc', 'root.child-1', 2);
    const other = rootHeader('other', { title: 'Another conversation' });
    let fork: Session;
    const at = '2025-01-02T00:00:00.000Z';
    /** The fork's own first turn, after its seed (seq 0–9) and session/end-seed (seq 10). */
    const forkLive: SessionEvent[] = [
      { seq: 11, at, type: 'turn/start', turnId: 'f1' },
      { seq: 12, at, type: 'user/message', text: 'after the fork', source: { kind: 'user' } },
      { seq: 13, at, type: 'turn/end', turnId: 'f1', stopReason: 'interrupted' },
    ];

    /** A root with two batches, a child created with setup events, a grandchild, a fork of the root, another root. */
    async function populate(store: Store): Promise<void> {
      await store.createSession(root);
      await store.append('root', eventsFor('root', 0, 7));
      await store.append('root', eventsFor('root', 7, 15));
      await store.createSession(child, eventsFor('root.child-1', 0, 3));
      await store.append('root.child-1', eventsFor('root.child-1', 3, 10));
      await store.createSession(grandchild);
      fork = Session.fromSeed({ id: 'fork-1', createdAt: root.createdAt, origin: 'fork', parentSession: 'root' }, eventsFor('root', 0, 10));
      await store.createSession(fork.header, fork.events);
      await store.append('fork-1', forkLive);
      await store.createSession(other, eventsFor('other', 0, 5));
    }

    async function assertPopulated(store: Store): Promise<void> {
      assert.deepEqual(store.list().sort(byId), [fork.header, grandchild, other, root, child].sort(byId));
      assert.deepEqual(store.children('root'), [child, fork.header], 'children in creation order');
      assert.deepEqual(store.children('root.child-1'), [grandchild]);
      assert.deepEqual(store.children('gc'), []);
      assert.deepEqual(store.children('other'), []);
      assert.deepEqual(store.header('fork-1'), { ...fork.header, seedLength: 10 });
      assert.equal(store.header('nope'), undefined);

      const r = await store.inspect('root');
      assert.ok(r instanceof Session);
      assert.deepEqual(r.header, root);
      assert.deepEqual(r.events, eventsFor('root', 0, 15));
      assert.deepEqual((await store.inspect('root.child-1')).events, eventsFor('root.child-1', 0, 10));
      assert.deepEqual((await store.inspect('gc')).events, []);
      assert.deepEqual((await store.inspect('other')).events, eventsFor('other', 0, 5));
      const f = await store.inspect('fork-1');
      assert.equal(f.length, 14);
      assert.deepEqual(f.events.slice(0, 11), fork.events);
      assert.equal(f.firstLiveSeq, 11);
      assert.deepEqual(f.events.slice(11), forkLive);
      assert.equal(await store.length('root'), 15);
      assert.equal(await store.length('gc'), 0);
    }

    it('lists, links and loads roots, children and forks', async () => {
      const store = await openStore();
      await populate(store);
      await assertPopulated(store);
    });

    it('listRefs hands out the kept headers (no copy) equal to list(); list() copies, so a caller changing one changes nothing kept', async () => {
      const store = await openStore();
      await populate(store);
      const refs = store.listRefs();
      assert.deepEqual([...refs], store.list());
      assert.equal(store.listRefs()[0], refs[0], 'the same object each time: nothing copied');
      const copy = store.list()[0];
      copy.title = 'changed by a caller';
      assert.notEqual(store.listRefs()[0].title, 'changed by a caller');
      assert.notEqual(store.header(copy.id)?.title, 'changed by a caller');
    });

    it('returns the same headers and events after close and reopen', async () => {
      const store = await openStore();
      await populate(store);
      await store.close();
      await assertPopulated(await openStore());
    });

    it('returns the same headers and events when the journals were never folded (reopen after a kill)', async () => {
      const store = await openStore();
      await populate(store);
      await closeAsIfKilled(store);
      assert.ok(fs.statSync(path.join(tmp.dir, 'trees', 'root.wal')).size > 0, 'the events are only in the journal');
      const again = await openStore();
      await assertPopulated(again);
      assert.deepEqual(again.problems, []);
    });

    it("stores a child in its root's tree file, so one file holds a whole conversation", async () => {
      const store = await openStore();
      await populate(store);
      await store.close();
      assert.deepEqual(fs.readdirSync(path.join(tmp.dir, 'trees')).sort(), ['other.db', 'other.wal', 'root.db', 'root.wal']);
    });
  });

  it('readEvents(id, fromSeq) returns the events from fromSeq on, across batch boundaries', async () => {
    const store = await openStore();
    await store.createSession(rootHeader('r'), eventsFor('r', 0, 4));
    for (const [from, to] of [
      [4, 5],
      [5, 12],
      [12, 20],
    ]) {
      await store.append('r', eventsFor('r', from, to));
    }
    for (const from of [0, 1, 3, 4, 5, 11, 12, 19]) assert.deepEqual(await store.readEvents('r', from), eventsFor('r', from, 20), `from ${from}`);
    assert.deepEqual(await store.readEvents('r', 20), []);
    assert.deepEqual(await store.readEvents('r', 1000), []);
    assert.deepEqual(await store.readEvents('r'), eventsFor('r', 0, 20));
  });

  it('accepts an empty batch and keeps the log as it is', async () => {
    const store = await openStore();
    await store.createSession(rootHeader('r'), eventsFor('r', 0, 3));
    await store.append('r', []);
    await store.append('r', eventsFor('r', 3, 4));
    assert.deepEqual(await store.readEvents('r'), eventsFor('r', 0, 4));
  });

  it('keeps every acknowledged append of a writer process that dies without closing', async function () {
    this.timeout(30_000);
    const acked = new Map<string, number>();
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, [WRITER, tmp.dir, '--exit-after', '40'], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.on('error', reject);
      child.on('close', (_code, signal) => {
        for (const m of out.matchAll(/^ack (\S+) (\d+)$/gm)) acked.set(m[1], Math.max(acked.get(m[1]) ?? -1, Number(m[2])));
        if (signal === 'SIGKILL') resolve();
        else reject(new Error(`writer ended with ${signal ?? 'no signal'}`));
      });
    });
    assert.equal(acked.size, 3);
    assert.ok(fs.existsSync(path.join(tmp.dir, 'arbor.lock')), 'the dead writer left its lock behind');

    const store = await openStore();
    assert.deepEqual(store.problems, []);
    for (const id of CRASH_SESSIONS) {
      const events = await store.readEvents(id);
      assert.ok(events.length > acked.get(id)!, `${id}: ${events.length} events, seq ${acked.get(id)} acknowledged`);
      assert.deepEqual(events, eventsFor(id, 0, events.length));
    }
  });

  describe('group commit', () => {
    it('lands many concurrent appends to several sessions, each session in order, sharing fsyncs', async () => {
      const store = await openStore();
      const ids = ['a', 'b'];
      for (const id of ids) {
        await store.createSession(rootHeader(id));
        await store.createSession(childHeader(`${id}-kid`, id));
      }
      const sessions = ids.flatMap((id) => [id, `${id}-kid`]);
      const appends = 50; // per session
      const syncs = await countSyncs(async () => {
        const all: Promise<void>[] = [];
        for (let k = 0; k < appends; k++) for (const id of sessions) all.push(store.append(id, eventsFor(id, k * 2, k * 2 + 2)));
        await Promise.all(all);
      });
      assert.ok(syncs >= 1 && syncs < (appends * sessions.length) / 10, `${syncs} fsyncs for ${appends * sessions.length} appends`);
      for (const id of sessions) assert.deepEqual(await store.readEvents(id), eventsFor(id, 0, appends * 2), id);
      await closeAsIfKilled(store);
      const again = await openStore();
      for (const id of sessions) assert.deepEqual(await again.readEvents(id), eventsFor(id, 0, appends * 2), `${id} after reopen`);
    });

    it('refuses a bad append alone: the appends and creations queued around it land, and it leaves no trace', async () => {
      const store = await openStore();
      await store.createSession(rootHeader('r'), eventsFor('r', 0, 2));
      const results = await Promise.allSettled([
        store.createSession(childHeader('first', 'r')), // flushed alone; the rest queue behind it
        store.createSession(childHeader('x', 'r'), [{ ...eventAt('x', 0), seq: 5 }]), // refused: SEQ_GAP
        store.createSession(childHeader('x', 'r'), eventsFor('x', 0, 2)), // the same id, now valid
        store.append('r', eventsFor('r', 2, 4)),
        store.append('r', eventsFor('r', 9, 10)), // refused: SEQ_GAP
        store.append('r', eventsFor('r', 4, 6)),
      ]);
      assert.deepEqual(
        results.map((r) => (r.status === 'fulfilled' ? 'ok' : (r.reason as StoreError).code)),
        ['ok', 'SEQ_GAP', 'ok', 'ok', 'SEQ_GAP', 'ok'],
      );
      assert.deepEqual(await store.readEvents('r'), eventsFor('r', 0, 6));
      assert.deepEqual(await store.readEvents('x'), eventsFor('x', 0, 2));
      await closeAsIfKilled(store);
      const again = await openStore();
      assert.deepEqual(await again.readEvents('r'), eventsFor('r', 0, 6));
      assert.deepEqual(
        again.children('r').map((h) => h.id),
        ['first', 'x'],
      );
    });
  });

  describe('refusals: a StoreError that says what to do, and nothing lost', () => {
    let store: Store;
    let before: Awaited<ReturnType<typeof contents>>;
    beforeEach(async () => {
      store = await openStore();
      await store.createSession(rootHeader('r'), eventsFor('r', 0, 6));
      await store.createSession(childHeader('c', 'r'), eventsFor('c', 0, 2));
      before = await contents(store);
    });
    /** After a refusal: same contents, still writable, and the same after reopening. */
    async function assertNothingLost(): Promise<void> {
      assert.deepEqual(await contents(store), before);
      await store.append('r', eventsFor('r', 6, 8));
      assert.deepEqual(await store.readEvents('r'), eventsFor('r', 0, 8));
      await store.close();
      const again = await openStore();
      assert.deepEqual(await again.readEvents('r'), eventsFor('r', 0, 8));
      assert.deepEqual(await again.readEvents('c'), eventsFor('c', 0, 2));
      assert.deepEqual(again.list().sort(byId), before.headers);
    }

    it('SEQ_GAP for a batch that skips ahead, repeats a seq or starts over, naming the expected seq', async () => {
      await rejectsWith(store.append('r', eventsFor('r', 7, 9)), 'SEQ_GAP', /\br\b/, /expected 6/);
      await rejectsWith(store.append('r', eventsFor('r', 5, 7)), 'SEQ_GAP', /expected 6/);
      await rejectsWith(store.append('r', eventsFor('r', 0, 3)), 'SEQ_GAP', /expected 6/);
      await rejectsWith(store.append('r', [eventAt('r', 6), eventAt('r', 8)]), 'SEQ_GAP', /expected 7/); // a gap inside the batch
      await assertNothingLost();
    });

    it('BAD_EVENT for a malformed event, naming the session and the field; the whole batch is refused', async () => {
      const good = eventAt('r', 6);
      const bad = (e: object): SessionEvent[] => [good, { ...eventAt('r', 7), ...e } as SessionEvent];
      await rejectsWith(store.append('r', bad({ type: 'user/shout' })), 'BAD_EVENT', /\br\b/, /user\/shout/);
      await rejectsWith(store.append('r', bad({ type: 'user/message', text: undefined, source: { kind: 'user' } })), 'BAD_EVENT', /text/);
      await rejectsWith(store.append('r', bad({ at: 'yesterday' })), 'BAD_EVENT', /\bat\b/);
      await rejectsWith(store.append('r', [good, null as unknown as SessionEvent]), 'BAD_EVENT');
      await rejectsWith(
        store.createSession(
          childHeader('c2', 'r'),
          bad({ type: 'nope' }).map((e, i) => ({ ...e, seq: i })),
        ),
        'BAD_EVENT',
        /c2/,
      );
      assert.equal(store.has('c2'), false, 'a refused creation publishes nothing');
      await assertNothingLost();
    });

    it('BAD_EVENT for an event that has no JSON form (a BigInt), and the journal stays whole across a crash', async () => {
      const odd = { ...eventAt('r', 7), tokens: 10n } as unknown as SessionEvent;
      // Queued together (behind a first append), so the refused one sits between two that land.
      const [first, refused, last] = await Promise.allSettled([
        store.append('r', eventsFor('r', 6, 7)),
        store.append('r', [odd]),
        store.append('r', eventsFor('r', 7, 8)),
      ]);
      assert.equal(first.status, 'fulfilled');
      assert.equal(last.status, 'fulfilled');
      await rejectsWith(refused.status === 'rejected' ? Promise.reject(refused.reason) : Promise.resolve(), 'BAD_EVENT', /JSON/);
      await closeAsIfKilled(store);
      const again = await openStore();
      assert.deepEqual(again.problems, []);
      assert.deepEqual(await again.readEvents('r'), eventsFor('r', 0, 8));
    });

    it('UNKNOWN_SESSION for an id the store does not hold, pointing at the list', async () => {
      await rejectsWith(store.append('ghost', eventsFor('ghost', 0, 1)), 'UNKNOWN_SESSION', /ghost/, /list sessions/);
      await rejectsWith(store.readEvents('ghost'), 'UNKNOWN_SESSION', /ghost/);
      await rejectsWith(store.inspect('ghost'), 'UNKNOWN_SESSION', /ghost/);
      await rejectsWith(store.length('ghost'), 'UNKNOWN_SESSION', /ghost/);
      await assertNothingLost();
    });

    it('DUPLICATE_SESSION for an id already taken, by a root or a child, asking for another id', async () => {
      await rejectsWith(store.createSession(rootHeader('r')), 'DUPLICATE_SESSION', /\br\b/, /pick another id/);
      await rejectsWith(store.createSession(rootHeader('c')), 'DUPLICATE_SESSION', /\bc\b/, /pick another id/);
      await rejectsWith(store.createSession(childHeader('c', 'r'), eventsFor('c', 0, 5)), 'DUPLICATE_SESSION', /pick another id/);
      await assertNothingLost();
    });

    it('UNKNOWN_PARENT for a child of a session the store does not hold, asking to create the parent first', async () => {
      await rejectsWith(store.createSession(childHeader('orphan', 'ghost')), 'UNKNOWN_PARENT', /ghost/, /orphan/, /create the parent first/);
      assert.equal(store.has('orphan'), false);
      await assertNothingLost();
    });

    it('CLOSED for any use after close', async () => {
      await store.close();
      await rejectsWith(store.append('r', eventsFor('r', 6, 7)), 'CLOSED');
      await rejectsWith(store.readEvents('r'), 'CLOSED');
      await rejectsWith(store.createSession(rootHeader('late')), 'CLOSED');
    });
  });

  describe('one writer per folder', () => {
    const lockFile = () => path.join(tmp.dir, 'arbor.lock');

    it('LOCKED for a second Store on the same folder in the same process, until the first closes', async () => {
      const first = await openStore();
      await first.createSession(rootHeader('r'), eventsFor('r', 0, 2));
      await rejectsWith(Store.open(tmp.dir), 'LOCKED', /share the open Store/);
      await rejectsWith(Store.open(path.relative(process.cwd(), tmp.dir)), 'LOCKED'); // another spelling of the same folder
      assert.equal(parseOwner(fs.readFileSync(lockFile(), 'utf8'))?.pid, process.pid);
      await first.close();
      assert.equal(fs.existsSync(lockFile()), false, 'close releases the lock');
      const second = await openStore();
      assert.deepEqual(await second.readEvents('r'), eventsFor('r', 0, 2));
    });

    it('LOCKED while another live process holds the folder, naming that process', async function () {
      this.timeout(20_000);
      const script = `
        const { Store } = require(${JSON.stringify(STORE_MODULE)});
        Store.open(${JSON.stringify(tmp.dir)}).then((s) => {
          process.stdout.write('ready\\n');
          process.stdin.on('end', () => s.close().then(() => process.exit(0)));
          process.stdin.resume();
        });`;
      const holder = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
      const exited = new Promise<void>((resolve) => holder.on('close', () => resolve()));
      try {
        await new Promise<void>((resolve, reject) => {
          holder.stdout.setEncoding('utf8').on('data', (d: string) => d.includes('ready') && resolve());
          holder.on('close', (code) => reject(new Error(`holder exited early (${code})`)));
        });
        await rejectsWith(Store.open(tmp.dir), 'LOCKED', new RegExp(`process ${holder.pid}`), /Close that Arbor/);
      } finally {
        holder.stdin.end();
        await exited;
      }
      await openStore(); // released by the holder's close
    });

    it('takes over a stale lock left by a process that no longer runs', async () => {
      const dead = spawn(process.execPath, ['-e', '0']);
      const pid = dead.pid!;
      await new Promise((resolve) => dead.on('close', resolve));
      fs.mkdirSync(tmp.dir, { recursive: true });
      fs.writeFileSync(lockFile(), String(pid));

      const store = await openStore();
      assert.equal(parseOwner(fs.readFileSync(lockFile(), 'utf8'))?.pid, process.pid);
      await store.createSession(rootHeader('r'));
      await store.close();
      assert.equal(fs.existsSync(lockFile()), false);
    });
  });

  describe('open tree files (maxOpenTrees)', () => {
    it('keeps every tree readable and writable when more trees are in use than may stay open', async () => {
      const store = await openStore({ maxOpenTrees: 1 });
      const ids = ['t1', 't2', 't3'];
      for (const id of ids) await store.createSession(rootHeader(id), eventsFor(id, 0, 2));
      const len = new Map(ids.map((id) => [id, 2]));
      const grow = (id: string) => {
        const n = len.get(id)!;
        len.set(id, n + 2);
        return store.append(id, eventsFor(id, n, n + 2));
      };
      // One at a time, round robin: every use reopens a tree another use just closed.
      for (let round = 0; round < 10; round++) {
        for (const id of ids) {
          await grow(id);
          assert.deepEqual((await store.inspect(id)).events, eventsFor(id, 0, len.get(id)!), `${id}, round ${round}`);
        }
      }
      // All at once: appends and reads of every tree interleaved.
      for (let round = 0; round < 10; round++) {
        const reads = await Promise.all(ids.flatMap((id) => [grow(id).then(() => undefined), store.readEvents(id).then((e) => e.length)]));
        assert.ok(reads.every((r) => r === undefined || r >= 2));
      }
      for (const id of ids) assert.deepEqual(await store.readEvents(id), eventsFor(id, 0, len.get(id)!), id);
      assert.deepEqual(store.problems, []);
      await store.close();

      const again = await openStore();
      assert.deepEqual(again.problems, []);
      for (const id of ids) assert.deepEqual(await again.readEvents(id), eventsFor(id, 0, len.get(id)!), `${id} after reopen`);
    });
  });
});
