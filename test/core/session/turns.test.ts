import * as assert from 'node:assert/strict';
import { Session } from '../../../src/core/session';
import { ev, expectRefusal, header, sessionWith, wholeTurn } from './fixtures';

describe('turns and tool calls', () => {
  describe('turn boundaries', () => {
    it('turn/start opens a turn and turn/end closes it', () => {
      const s = Session.create(header());
      assert.equal(s.openTurnId, null);
      s.append(ev.turnStart('t1'));
      assert.equal(s.openTurnId, 't1');
      s.append(ev.user('hi'));
      s.append(ev.assistant('hello'));
      s.append(ev.turnEnd('t1'));
      assert.equal(s.openTurnId, null);
      s.append(ev.turnStart('t2'));
      assert.equal(s.openTurnId, 't2');
    });

    it('refuses turn/start while a turn is open: TURN_ALREADY_OPEN', () => {
      const s = sessionWith([ev.turnStart('t1'), ev.user('hi')]);
      const err = expectRefusal(s, (x) => x.append(ev.turnStart('t2')), { code: 'TURN_ALREADY_OPEN', field: 'type', seq: 2 });
      assert.match(err.message, /turn t1 is still open/);
      // Not even the same id twice.
      expectRefusal(s, (x) => x.append(ev.turnStart('t1')), { code: 'TURN_ALREADY_OPEN', field: 'type', seq: 2 });
    });

    it('refuses turn/end naming another turn: TURN_MISMATCH on turnId', () => {
      const s = sessionWith([ev.turnStart('t1')]);
      const err = expectRefusal(s, (x) => x.append(ev.turnEnd('t2')), { code: 'TURN_MISMATCH', field: 'turnId', seq: 1 });
      assert.match(err.message, /names turn t2 but turn t1 is open/);
    });

    it('refuses turn/end when no turn is open: TURN_NOT_OPEN', () => {
      expectRefusal(Session.create(header()), (x) => x.append(ev.turnEnd('t1')), { code: 'TURN_NOT_OPEN', field: 'type', seq: 0 });
      const s = sessionWith(wholeTurn('t1'));
      expectRefusal(s, (x) => x.append(ev.turnEnd('t1')), { code: 'TURN_NOT_OPEN', field: 'type', seq: 4 });
    });

    it('refuses assistant messages, tool results and request headers outside a turn: TURN_NOT_OPEN', () => {
      for (const s of [Session.create(header()), sessionWith(wholeTurn('t1'))]) {
        const seq = s.length;
        for (const d of [ev.assistant('hi'), ev.result('c1', 'read'), ev.requestHeader()]) {
          const err = expectRefusal(s, (x) => x.append(d), { code: 'TURN_NOT_OPEN', field: 'type', seq });
          assert.ok(err.message.startsWith(`${d.type} needs an open turn`), err.message);
        }
      }
    });

    it('allows user messages and runtime events between turns', () => {
      const s = sessionWith([
        ...wholeTurn('t1'),
        ev.user('between'),
        ev.accepted('m1'),
        ev.sandbox('read-only', 'user'),
        ev.approval('ask', 'user'),
        ev.descriptor('x'),
        { type: 'goal/change', goal: null },
        { type: 'workflow/log', runId: 'r1', data: { message: 'm' } },
        ev.compactionStart('c1'),
        ev.compactionEnd('c1', 'aborted'),
      ]);
      assert.equal(s.length, 13);
    });
  });

  describe('request/header', () => {
    it('is accepted inside a turn, any number of times', () => {
      const s = sessionWith([
        ev.turnStart('t1'),
        ev.user('hi'),
        ev.requestHeader(),
        ev.assistant('', [['c1', 'read']]),
        ev.result('c1', 'read'),
        ev.requestHeader(),
      ]);
      assert.equal(s.events[5].type, 'request/header');
    });
  });

  describe('tool calls of the open turn', () => {
    it('tracks pending calls from the assistant until each is answered', () => {
      const s = sessionWith([
        ev.turnStart('t1'),
        ev.assistant('', [
          ['c1', 'read'],
          ['c2', 'grep'],
        ]),
      ]);
      assert.deepEqual(
        [...s.pendingCalls],
        [
          ['c1', 'read'],
          ['c2', 'grep'],
        ],
      );
      s.append(ev.result('c2', 'grep'));
      assert.deepEqual([...s.pendingCalls], [['c1', 'read']]);
      s.append(ev.result('c1', 'read', 'no such file', true));
      assert.deepEqual([...s.pendingCalls], []);
      s.append(ev.turnEnd('t1'));
    });

    it('refuses a result for a call nobody made: UNKNOWN_CALL on callId', () => {
      const s = sessionWith([ev.turnStart('t1'), ev.assistant('', [['c1', 'read']])]);
      const err = expectRefusal(s, (x) => x.append(ev.result('c9', 'read')), { code: 'UNKNOWN_CALL', field: 'callId', seq: 2 });
      assert.match(err.message, /no pending tool call c9 in the current turn/);
    });

    it("refuses a result for a previous turn's call: UNKNOWN_CALL", () => {
      const s = sessionWith([ev.turnStart('t1'), ev.assistant('', [['c1', 'read']]), ev.turnEnd('t1', 'interrupted'), ev.turnStart('t2')]);
      assert.deepEqual([...s.pendingCalls], [], 'a new turn starts with no pending calls');
      expectRefusal(s, (x) => x.append(ev.result('c1', 'read')), { code: 'UNKNOWN_CALL', field: 'callId', seq: 4 });
    });

    it('refuses a second result for the same call: DUPLICATE_RESULT on callId', () => {
      const s = sessionWith([ev.turnStart('t1'), ev.assistant('', [['c1', 'read']]), ev.result('c1', 'read')]);
      const err = expectRefusal(s, (x) => x.append(ev.result('c1', 'read', 'again')), { code: 'DUPLICATE_RESULT', field: 'callId', seq: 3 });
      assert.match(err.message, /tool call c1 already has a result/);
    });

    it('refuses a result whose tool name does not match the call: BAD_FIELD on name', () => {
      const s = sessionWith([ev.turnStart('t1'), ev.assistant('', [['c1', 'read']])]);
      const err = expectRefusal(s, (x) => x.append(ev.result('c1', 'write')), { code: 'BAD_FIELD', field: 'name', seq: 2 });
      assert.match(err.message, /names write but call c1 was read/);
      assert.deepEqual([...s.pendingCalls], [['c1', 'read']], 'the call is still pending');
    });

    it('refuses a tool call id used twice in one turn: BAD_FIELD on toolCalls', () => {
      const pending = sessionWith([ev.turnStart('t1'), ev.assistant('', [['c1', 'read']])]);
      expectRefusal(pending, (x) => x.append(ev.assistant('', [['c1', 'grep']])), { code: 'BAD_FIELD', field: 'toolCalls', seq: 2 });
      const answered = sessionWith([ev.turnStart('t1'), ev.assistant('', [['c1', 'read']]), ev.result('c1', 'read')]);
      expectRefusal(answered, (x) => x.append(ev.assistant('', [['c1', 'read']])), { code: 'BAD_FIELD', field: 'toolCalls', seq: 3 });
    });

    it('leaves no call of a refused assistant message pending', () => {
      // c2 is new, c1 is a reuse: the whole message is refused, c2 included.
      const s = sessionWith([ev.turnStart('t1'), ev.assistant('', [['c1', 'read']])]);
      expectRefusal(
        s,
        (x) =>
          x.append(
            ev.assistant('', [
              ['c2', 'grep'],
              ['c1', 'read'],
            ]),
          ),
        { code: 'BAD_FIELD', field: 'toolCalls', seq: 2 },
      );
      assert.deepEqual([...s.pendingCalls], [['c1', 'read']]);
      s.append(ev.result('c1', 'read'));
      expectRefusal(s, (x) => x.append(ev.result('c2', 'grep')), { code: 'UNKNOWN_CALL' });
      s.append(ev.turnEnd('t1'));
    });

    it('lets a later turn reuse a call id', () => {
      const s = sessionWith([
        ev.turnStart('t1'),
        ev.assistant('', [['c1', 'read']]),
        ev.result('c1', 'read'),
        ev.turnEnd('t1'),
        ev.turnStart('t2'),
        ev.assistant('', [['c1', 'grep']]),
        ev.result('c1', 'grep'),
        ev.turnEnd('t2'),
      ]);
      assert.equal(s.length, 8);
    });
  });

  describe('ending a turn with calls still pending', () => {
    it('refuses a completed turn: PENDING_CALLS on stopReason, listing the calls', () => {
      const s = sessionWith([
        ev.turnStart('t1'),
        ev.assistant('', [
          ['c1', 'read'],
          ['c2', 'grep'],
        ]),
        ev.result('c1', 'read'),
      ]);
      const err = expectRefusal(s, (x) => x.append(ev.turnEnd('t1', 'completed')), { code: 'PENDING_CALLS', field: 'stopReason', seq: 3 });
      assert.match(err.message, /unanswered tool calls \(c2\)/);
      assert.equal(s.openTurnId, 't1', 'the turn is still open');
    });

    it('accepts an interrupted turn, which closes it and drops its pending calls', () => {
      const s = sessionWith([ev.turnStart('t1'), ev.assistant('', [['c1', 'read']])]);
      s.append(ev.turnEnd('t1', 'interrupted'));
      assert.equal(s.openTurnId, null);
      assert.deepEqual([...s.pendingCalls], []);
    });

    for (const reason of ['error', 'max-tokens', 'cancelled'] as const) {
      it(`accepts a turn that ends with stopReason ${reason}`, () => {
        const s = sessionWith([ev.turnStart('t1'), ev.assistant('', [['c1', 'read']])]);
        s.append(ev.turnEnd('t1', reason));
        assert.equal(s.openTurnId, null);
      });
    }

    it('accepts a completed turn once every call is answered', () => {
      const s = sessionWith([ev.turnStart('t1'), ev.assistant('', [['c1', 'read']]), ev.result('c1', 'read'), ev.assistant('done')]);
      s.append(ev.turnEnd('t1', 'completed'));
      assert.equal(s.openTurnId, null);
    });
  });
});
