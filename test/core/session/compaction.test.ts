import * as assert from 'node:assert/strict';
import { ev, expectRefusal, raw, sessionWith, wholeTurn } from './fixtures';

describe('compaction transactions', () => {
  it('opens with compaction/start and closes with compaction/end, committed or aborted', () => {
    const s = sessionWith(wholeTurn('t1'));
    s.append(ev.compactionStart('c1'));
    assert.equal(s.openCompactionId, 'c1');
    s.append(ev.replacement('c1', 0, 3));
    s.append(ev.compactionSummary('c1'));
    s.append(ev.compactionEnd('c1', 'committed'));
    assert.equal(s.openCompactionId, null);
    s.append(ev.compactionStart('c2'));
    s.append(ev.compactionEnd('c2', 'aborted'));
    assert.equal(s.openCompactionId, null);
  });

  it('may run while a turn is open', () => {
    const s = sessionWith([ev.turnStart('t1'), ev.user('hi'), ev.compactionStart('c1'), ev.replacement('c1', 1, 1), ev.compactionEnd('c1')]);
    s.append(ev.turnEnd('t1'));
  });

  it('refuses a second compaction/start while one is open: COMPACTION_STATE', () => {
    const s = sessionWith([ev.compactionStart('c1')]);
    const err = expectRefusal(s, (x) => x.append(ev.compactionStart('c2')), { code: 'COMPACTION_STATE', field: 'type', seq: 1 });
    assert.match(err.message, /compaction c1 is still open/);
  });

  it('refuses compaction/summary and compaction/end with no compaction open: COMPACTION_STATE on compactionId', () => {
    const s = sessionWith([ev.user('x')]);
    for (const d of [ev.compactionSummary('c1'), ev.compactionEnd('c1')]) {
      const err = expectRefusal(s, (x) => x.append(d), { code: 'COMPACTION_STATE', field: 'compactionId', seq: 1 });
      assert.match(err.message, /no compaction c1 is open/);
    }
  });

  it('refuses events naming another compaction than the open one', () => {
    const s = sessionWith([ev.user('x'), ev.compactionStart('c1')]);
    for (const d of [ev.compactionSummary('c2'), ev.compactionEnd('c2'), ev.replacement('c2', 0, 0)]) {
      const err = expectRefusal(s, (x) => x.append(d), { code: 'COMPACTION_STATE', field: 'compactionId', seq: 2 });
      assert.match(err.message, /compaction c1 is open, not c2/);
    }
  });

  it('refuses a compaction that was already closed', () => {
    const s = sessionWith([ev.user('x'), ev.compactionStart('c1'), ev.compactionEnd('c1')]);
    expectRefusal(s, (x) => x.append(ev.compactionEnd('c1')), { code: 'COMPACTION_STATE', field: 'compactionId', seq: 3 });
    expectRefusal(s, (x) => x.append(ev.replacement('c1', 0, 0)), { code: 'COMPACTION_STATE', field: 'compactionId', seq: 3 });
  });

  describe('the replacing user/message', () => {
    it('must sit inside its open compaction', () => {
      const s = sessionWith(wholeTurn('t1'));
      expectRefusal(s, (x) => x.append(ev.replacement('c1', 0, 3)), { code: 'COMPACTION_STATE', field: 'compactionId', seq: 4 });
    });

    it('needs surfaceOp, replaces and compactionId together: BAD_FIELD on surfaceOp', () => {
      const s = sessionWith([...wholeTurn('t1'), ev.compactionStart('c1')]);
      const full = ev.replacement('c1', 0, 3) as Record<string, unknown>;
      for (const drop of ['surfaceOp', 'replaces', 'compactionId']) {
        const partial = { ...full };
        delete partial[drop];
        expectRefusal(s, (x) => x.append(raw(partial)), { code: 'BAD_FIELD', field: 'surfaceOp', seq: 5 });
      }
    });

    it('may carry a compactionId alone (no surface change) like any message', () => {
      const s = sessionWith([ev.compactionStart('c1')]);
      s.append(raw({ ...ev.user('note'), compactionId: 'c1' }));
      assert.equal(s.length, 2);
    });

    it('must replace earlier events only: BAD_FIELD on replaces', () => {
      const s = sessionWith([...wholeTurn('t1'), ev.compactionStart('c1')]);
      // It is about to be seq 5.
      expectRefusal(s, (x) => x.append(ev.replacement('c1', 0, 5)), { code: 'BAD_FIELD', field: 'replaces', seq: 5 });
      expectRefusal(s, (x) => x.append(ev.replacement('c1', 6, 9)), { code: 'BAD_FIELD', field: 'replaces', seq: 5 });
      s.append(ev.replacement('c1', 0, 4));
    });
  });
});
