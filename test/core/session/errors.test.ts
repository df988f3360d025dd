import * as assert from 'node:assert/strict';
import { Session, type SessionErrorCode, type SessionEvent, SessionValidationError } from '../../../src/core/session';
import { ev, expectError, forkHeader, header, raw, sessionWith } from './fixtures';

describe('SessionValidationError', () => {
  it('is an Error carrying a stable code, the field and the seq', () => {
    const err = new SessionValidationError('BAD_FIELD', 'turn/end.stopReason must be one of …', 'stopReason', 7);
    assert.ok(err instanceof Error);
    assert.equal(err.name, 'SessionValidationError');
    assert.equal(err.code, 'BAD_FIELD');
    assert.equal(err.field, 'stopReason');
    assert.equal(err.seq, 7);
  });

  it('names the field and the seq in its message, when it has them', () => {
    assert.equal(new SessionValidationError('BAD_FIELD', 'm', 'text', 3).message, "m (field 'text', seq 3)");
    assert.equal(new SessionValidationError('BAD_HEADER', 'm', 'id').message, "m (field 'id')");
    assert.equal(new SessionValidationError('SEQ_GAP', 'm', undefined, 0).message, 'm (seq 0)');
    assert.equal(new SessionValidationError('BAD_SEED', 'm').message, 'm');
  });
});

describe('every error code the session raises', () => {
  // One scenario per code; the Record type makes a new code without a scenario a compile error.
  // The specs per concern cover each code in depth; this is the index.
  const scenarios: Record<SessionErrorCode, () => unknown> = {
    BAD_HEADER: () => Session.create({ ...header(), id: '' }),
    BAD_EVENT: () => Session.restore(header(), [null as unknown as SessionEvent]),
    UNKNOWN_TYPE: () => Session.create(header()).append(raw({ type: 'user/typo', text: 'x' })),
    MISSING_FIELD: () => Session.create(header()).append(raw({ type: 'turn/start' })),
    BAD_FIELD: () => Session.create(header()).append(raw({ type: 'turn/start', turnId: 5 })),
    SEQ_GAP: () => Session.create(header()).append({ ...ev.turnStart('t1'), seq: 1 }),
    TURN_NOT_OPEN: () => Session.create(header()).append(ev.assistant('hi')),
    TURN_ALREADY_OPEN: () => sessionWith([ev.turnStart('t1')]).append(ev.turnStart('t2')),
    TURN_MISMATCH: () => sessionWith([ev.turnStart('t1')]).append(ev.turnEnd('t2')),
    UNKNOWN_CALL: () => sessionWith([ev.turnStart('t1')]).append(ev.result('c1', 'read')),
    DUPLICATE_RESULT: () => sessionWith([ev.turnStart('t1'), ev.assistant('', [['c1', 'read']]), ev.result('c1', 'read')]).append(ev.result('c1', 'read')),
    PENDING_CALLS: () => sessionWith([ev.turnStart('t1'), ev.assistant('', [['c1', 'read']])]).append(ev.turnEnd('t1')),
    COMPACTION_STATE: () => Session.create(header()).append(ev.compactionEnd('c1')),
    INBOX_STATE: () => Session.create(header()).append(ev.claimed('m1')),
    BAD_SEED: () => Session.fromSeed(forkHeader(), []),
  };

  for (const [code, act] of Object.entries(scenarios) as Array<[SessionErrorCode, () => unknown]>) {
    it(`raises ${code}`, () => {
      expectError(act, { code });
    });
  }
});
