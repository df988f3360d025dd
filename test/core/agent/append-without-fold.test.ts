import * as assert from 'node:assert/strict';
import { appendWithoutFold, SessionWriter } from '../../../src/core/agent/session-writer';
import type { EventDraft, SessionEvent, SessionHeader } from '../../../src/core/session/events';
import { Store } from '../../../src/core/store/store';
import { storeFolderPerTest } from '../../support/store-fixtures';

// A rewind's record appended to a stored log that is not resident, without reading the log
// (decision 0128): checked by its shape and its seq, durable, staged like any writer's event;
// a type with an ordering rule still goes through the folded log.

const header = (id: string): SessionHeader => ({ id, createdAt: new Date().toISOString(), origin: 'user' });
const at = new Date().toISOString();
const turn: SessionEvent[] = [
  { seq: 0, at, type: 'turn/start', turnId: 't1' },
  { seq: 1, at, type: 'user/message', text: 'hi', source: { kind: 'user' } },
  { seq: 2, at, type: 'turn/end', turnId: 't1', stopReason: 'completed' },
];
const record = (path: string): EventDraft => ({
  type: 'checkpoint',
  changes: [{ path, root: '/ws', before: 'a'.repeat(40), after: null, callId: 'rewind-1', tool: 'rewind' }],
  rewind: { toSeq: 1, subtree: false, sessions: ['s-a'] },
});

describe('appendWithoutFold: a record appended to a stored log without reading it', () => {
  const folder = storeFolderPerTest();

  it('appends at the stored length, durably, staged once to the store’s listeners', async () => {
    const store = await folder.openStore();
    await store.createSession(header('s-a'), turn);
    const staged: SessionEvent[] = [];
    store.onStaged((id, e) => {
      if (id === 's-a') staged.push(e);
    });
    let inspected = 0;
    const inspect = store.inspect.bind(store);
    store.inspect = (id) => {
      inspected++;
      return inspect(id);
    };
    const e = await appendWithoutFold(store, 's-a', record('/ws/f.ts'));
    assert.equal(inspected, 0, 'the log is not read');
    assert.equal(e.seq, 3);
    assert.equal(e.type, 'checkpoint');
    assert.deepEqual(staged, [e]);
    await store.close();
    const again = await Store.open(folder.dir);
    try {
      const log = (await again.inspect('s-a')).events;
      assert.equal(log.length, 4);
      assert.deepEqual(log[3], e);
    } finally {
      await again.close();
    }
  });

  it('refuses a malformed record before staging or storing anything', async () => {
    const store = await folder.openStore();
    await store.createSession(header('s-a'), turn);
    let staged = 0;
    store.onStaged(() => staged++);
    const bad = { type: 'checkpoint', changes: 'not a list' } as unknown as EventDraft;
    await assert.rejects(appendWithoutFold(store, 's-a', bad), (err: Error & { code?: string }) => err.code === 'BAD_FIELD');
    assert.equal(staged, 0);
    assert.equal(await store.length('s-a'), 3);
  });

  it('a write that lands between its seq and its commit refuses that commit: the record is taken again after it, the log never interleaves', async () => {
    const store = await folder.openStore();
    await store.createSession(header('s-a'), turn);
    // Both take seq 3 from the store; the first to commit wins, the other is refused and taken again at 4.
    const [a, b] = await Promise.all([appendWithoutFold(store, 's-a', record('/ws/a.ts')), appendWithoutFold(store, 's-a', record('/ws/b.ts'))]);
    assert.deepEqual([a.seq, b.seq].sort(), [3, 4]);
    const log = (await store.inspect('s-a')).events;
    assert.equal(log.length, 5);
    assert.deepEqual(
      [log[3], log[4]].sort((x, y) => x.seq - y.seq),
      [a, b].sort((x, y) => x.seq - y.seq),
    );
  });

  it('a seq asked for is kept: a write that took it first refuses the record (SEQ_GAP)', async () => {
    const store = await folder.openStore();
    await store.createSession(header('s-a'), turn);
    await appendWithoutFold(store, 's-a', record('/ws/a.ts'));
    await assert.rejects(appendWithoutFold(store, 's-a', { ...record('/ws/b.ts'), seq: 3 }), (err: Error & { code?: string }) => err.code === 'SEQ_GAP');
    assert.equal(await store.length('s-a'), 4);
  });

  it('a message written to the released node while the record is under way does not lose the record', async () => {
    const store = await folder.openStore();
    await store.createSession(header('s-a'), turn);
    // A quiet message to the released node (inbound.ts: a SessionWriter over the folded log) and the
    // rewind's record both start from seq 3. A checkpoint has no ordering rule: the record goes after
    // the message rather than being refused after the rewind's files were written (its undo then
    // missing until the next open's recovery).
    const message = new SessionWriter(await store.inspect('s-a'), store);
    const staged: SessionEvent[] = [];
    store.onStaged((id, e) => {
      if (id === 's-a') staged.push(e);
    });
    const rec = appendWithoutFold(store, 's-a', record('/ws/a.ts'));
    const msg = message.append({ type: 'user/message', text: 'meanwhile', source: { kind: 'user' } });
    const [r, m] = await Promise.allSettled([rec, msg]);
    assert.equal(m.status, 'fulfilled');
    assert.equal(r.status, 'fulfilled', r.status === 'rejected' ? String(r.reason) : '');
    const log = (await store.inspect('s-a')).events;
    assert.deepEqual(
      log.slice(3).map((e) => e.type),
      ['user/message', 'checkpoint'],
    );
    assert.deepEqual((r as PromiseFulfilledResult<SessionEvent>).value, log[4]);
    // The listeners heard each event once, at the seq it has in the log (no record staged at a seq it never got).
    assert.deepEqual(
      staged.map((e) => [e.seq, e.type]),
      [
        [3, 'user/message'],
        [4, 'checkpoint'],
      ],
    );
  });

  it('a type with an ordering rule is checked against the folded log, as a SessionWriter does', async () => {
    const store = await folder.openStore();
    await store.createSession(header('s-a'), turn);
    // No turn is open: a tool result has no call to answer.
    const result: EventDraft = { type: 'tool/result', callId: 'c1', name: 'read_file', content: 'x', isError: false };
    await assert.rejects(appendWithoutFold(store, 's-a', result), (err: Error & { code?: string }) => err.code === 'TURN_NOT_OPEN');
    const viaWriter = new SessionWriter(await store.inspect('s-a'), store);
    assert.throws(
      () => viaWriter.session.append(result),
      (err: Error & { code?: string }) => err.code === 'TURN_NOT_OPEN',
    );
    assert.equal(await store.length('s-a'), 3);
    // With a turn open it is appended (through the fold).
    await appendWithoutFold(store, 's-a', { type: 'turn/start', turnId: 't2' });
    const e = await appendWithoutFold(store, 's-a', { type: 'user/message', text: 'again', source: { kind: 'user' } });
    assert.equal(e.seq, 4);
  });
});
