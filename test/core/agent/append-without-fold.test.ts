import * as assert from 'node:assert/strict';
import { appendWithoutFold, SessionWriter, withStoredLog } from '../../../src/core/agent/session-writer';
import type { EventDraft, SessionEvent, SessionHeader } from '../../../src/core/session/events';
import { Store } from '../../../src/core/store/store';
import { storeFolderPerTest } from '../../support/store-fixtures';

// A rewind's record appended to a stored log that is not resident, without reading the log
// (decision 0128): checked by its shape and its seq, durable, staged like any writer's event;
// a type with an ordering rule still goes through the folded log. Its caller holds the log's
// gate, which every writer of a log no agent holds goes through (decision 0129).

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

  it('outside its log’s gate, a write that lands between its seq and its commit refuses it (SEQ_GAP, not retried); through the gate both land in turn', async () => {
    const store = await folder.openStore();
    await store.createSession(header('s-a'), turn);
    // Both take seq 3 from the store; the first to commit wins, the other is refused: the caller holds the gate (decision 0129).
    const raced = await Promise.allSettled([appendWithoutFold(store, 's-a', record('/ws/a.ts')), appendWithoutFold(store, 's-a', record('/ws/b.ts'))]);
    assert.deepEqual(raced.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
    const refused = raced.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    assert.equal((refused.reason as { code?: string }).code, 'SEQ_GAP');
    assert.equal(await store.length('s-a'), 4);
    const [a, b] = await Promise.all([
      store.logGate.run('s-a', () => appendWithoutFold(store, 's-a', record('/ws/a.ts'))),
      store.logGate.run('s-a', () => appendWithoutFold(store, 's-a', record('/ws/b.ts'))),
    ]);
    assert.deepEqual([a.seq, b.seq], [4, 5]);
    assert.deepEqual((await store.inspect('s-a')).events.slice(4), [a, b]);
  });

  it('a seq asked for is kept: a write that took it first refuses the record (SEQ_GAP)', async () => {
    const store = await folder.openStore();
    await store.createSession(header('s-a'), turn);
    await appendWithoutFold(store, 's-a', record('/ws/a.ts'));
    await assert.rejects(appendWithoutFold(store, 's-a', { ...record('/ws/b.ts'), seq: 3 }), (err: Error & { code?: string }) => err.code === 'SEQ_GAP');
    assert.equal(await store.length('s-a'), 4);
  });

  it('a message to the released node and the record take turns at its log’s gate: neither refused, each heard once at its seq', async () => {
    const store = await folder.openStore();
    await store.createSession(header('s-a'), turn);
    // A quiet message to the released node (inbound.ts: a SessionWriter over the folded log) and the
    // rewind's record (checkpoint/service.ts) both reach the log through its gate (decision 0129):
    // the message reads the log only once the record is durable, so neither is refused.
    const staged: SessionEvent[] = [];
    store.onStaged((id, e) => {
      if (id === 's-a') staged.push(e);
    });
    const rec = store.logGate.run('s-a', () => appendWithoutFold(store, 's-a', record('/ws/a.ts')));
    const msg = withStoredLog(
      store,
      's-a',
      () => undefined,
      (log) => log.append({ type: 'user/message', text: 'meanwhile', source: { kind: 'user' } }),
    );
    const [r, m] = await Promise.allSettled([rec, msg]);
    assert.equal(m.status, 'fulfilled', m.status === 'rejected' ? String(m.reason) : '');
    assert.equal(r.status, 'fulfilled', r.status === 'rejected' ? String(r.reason) : '');
    const log = (await store.inspect('s-a')).events;
    assert.deepEqual(
      log.slice(3).map((e) => e.type),
      ['checkpoint', 'user/message'],
    );
    assert.deepEqual((r as PromiseFulfilledResult<SessionEvent>).value, log[3]);
    assert.deepEqual(
      staged.map((e) => [e.seq, e.type]),
      [
        [3, 'checkpoint'],
        [4, 'user/message'],
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
