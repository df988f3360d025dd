import * as assert from 'node:assert/strict';
import { type AssistantMessageEvent, Session, type SessionEvent, type UserMessageEvent } from '../../../src/core/session';
import { ev, expectRefusal, header, sessionWith, T0, wholeTurn } from './fixtures';

describe('Session.append: seq, time and ownership', () => {
  describe('seq', () => {
    it('numbers events 0, 1, 2, … with no gaps when seq is absent', () => {
      const s = sessionWith([...wholeTurn('t1'), ...wholeTurn('t2')]);
      assert.deepEqual(
        s.events.map((e) => e.seq),
        [0, 1, 2, 3, 4, 5, 6, 7],
      );
      assert.equal(s.length, 8);
    });

    it('accepts an explicit seq that is the next one', () => {
      const s = Session.create(header());
      assert.equal(s.append({ ...ev.turnStart('t1'), seq: 0 }).seq, 0);
      assert.equal(s.append({ ...ev.user('hi'), seq: 1 }).seq, 1);
    });

    it('refuses a seq that skips ahead, with SEQ_GAP naming the expected seq', () => {
      const s = sessionWith([ev.turnStart('t1')]);
      const err = expectRefusal(s, (x) => x.append({ ...ev.user('hi'), seq: 5 }), { code: 'SEQ_GAP', field: 'seq', seq: 1 });
      assert.match(err.message, /seq 5 does not follow the log \(expected 1\)/);
    });

    it('refuses a seq that repeats or goes back', () => {
      const s = sessionWith([ev.turnStart('t1'), ev.user('hi')]);
      expectRefusal(s, (x) => x.append({ ...ev.assistant('a'), seq: 1 }), { code: 'SEQ_GAP', field: 'seq', seq: 2 });
      expectRefusal(s, (x) => x.append({ ...ev.assistant('a'), seq: 0 }), { code: 'SEQ_GAP', field: 'seq', seq: 2 });
    });

    it('refuses a seq that is not a non-negative integer, with BAD_FIELD on seq', () => {
      const s = sessionWith([ev.turnStart('t1')]);
      for (const seq of [-1, 1.5, Number.NaN, '1']) {
        expectRefusal(s, (x) => x.append({ ...ev.user('hi'), seq: seq as number }), { code: 'BAD_FIELD', field: 'seq', seq: 1 });
      }
    });
  });

  describe('at', () => {
    it('is filled with the current ISO-8601 time when absent', () => {
      const s = Session.create(header());
      const before = Date.now();
      const e = s.append(ev.user('hi'));
      const after = Date.now();
      assert.equal(typeof e.at, 'string');
      assert.equal(new Date(e.at).toISOString(), e.at, 'an ISO-8601 UTC string');
      const t = Date.parse(e.at);
      assert.ok(t >= before && t <= after, `${e.at} lies within the append`);
      assert.equal(s.events[0].at, e.at);
    });

    it('is kept when the caller gives one', () => {
      const s = Session.create(header());
      assert.equal(s.append({ ...ev.user('hi'), at: T0 }).at, T0);
      assert.equal(s.events[0].at, T0);
    });

    it('refuses an at that is not a time, with BAD_FIELD on at', () => {
      const s = Session.create(header());
      for (const at of ['', 'yesterday', 42]) {
        expectRefusal(s, (x) => x.append({ ...ev.user('hi'), at: at as string }), { code: 'BAD_FIELD', field: 'at', seq: 0 });
      }
    });

    it('checks every at, also right after one that passed (the last good time is remembered, never a bad one)', () => {
      const s = Session.create(header());
      s.append({ ...ev.user('a'), at: T0 });
      s.append({ ...ev.user('b'), at: T0 });
      expectRefusal(s, (x) => x.append({ ...ev.user('c'), at: 'later' }), { code: 'BAD_FIELD', field: 'at', seq: 2 });
      expectRefusal(s, (x) => x.append({ ...ev.user('c'), at: 'later' }), { code: 'BAD_FIELD', field: 'at', seq: 2 });
      assert.equal(s.append({ ...ev.user('d'), at: T0 }).seq, 2);
    });
  });

  describe('ownership: the log holds deep copies', () => {
    it('returns the stored event with seq and at filled in', () => {
      const s = Session.create(header());
      const e = s.append(ev.user('hi'));
      assert.deepEqual(e, { type: 'user/message', text: 'hi', source: { kind: 'user' }, seq: 0, at: e.at });
      assert.deepEqual(s.events[0], e);
    });

    it('is not changed by mutating the draft afterwards, nested fields included', () => {
      const s = sessionWith([ev.turnStart('t1')]);
      const draft = {
        type: 'assistant/message' as const,
        text: 'calling',
        model: 'm',
        toolCalls: [{ id: 'c1', name: 'read', arguments: '{"path":"a"}' }],
        usage: { promptTokens: 10, completionTokens: 2 },
      };
      s.append(draft);
      const stored = structuredClone(s.events[1]);
      draft.text = 'mutated';
      draft.toolCalls[0].name = 'write';
      draft.toolCalls.push({ id: 'c2', name: 'x', arguments: '' });
      draft.usage.promptTokens = 999;
      assert.deepEqual(s.events[1], stored);
      assert.deepEqual([...s.pendingCalls], [['c1', 'read']]);
    });

    it('is not changed by mutating the returned event afterwards, nested fields included', () => {
      const s = Session.create(header());
      const e = s.append({ type: 'user/message', text: 'hi', source: { kind: 'subagent-report', fromSession: 'child', mode: 'wakeup' } }) as UserMessageEvent;
      const stored = structuredClone(s.events[0]);
      e.text = 'mutated';
      e.source.kind = 'goal';
      e.seq = 42;
      assert.deepEqual(s.events[0], stored);
      assert.equal(s.length, 1);
      assert.equal(s.append(ev.user('next')).seq, 1);
    });

    it('does not share nested arrays between the returned event and the log', () => {
      const s = sessionWith([ev.turnStart('t1')]);
      const e = s.append(ev.assistant('', [['c1', 'read']])) as AssistantMessageEvent;
      e.toolCalls!.push({ id: 'c2', name: 'write', arguments: '{}' });
      assert.equal((s.events[1] as AssistantMessageEvent).toolCalls!.length, 1);
    });
  });

  describe("adopt: a draft handed over is the log's own", () => {
    it('keeps the draft itself with seq and at filled in, validated and ordered like append', () => {
      const s = sessionWith([ev.turnStart('t1')]);
      const draft = { type: 'assistant/message' as const, text: 'calling', model: 'm', toolCalls: [{ id: 'c1', name: 'read', arguments: '{}' }] };
      s.adopt(draft);
      assert.equal(s.events[1], draft, 'no copy in');
      assert.equal(s.events[1].seq, 1);
      assert.equal(typeof s.events[1].at, 'string');
      assert.deepEqual([...s.pendingCalls], [['c1', 'read']]);
      s.adopt({ type: 'tool/result', callId: 'c1', name: 'read', content: 'ok', isError: false });
      assert.equal(s.length, 3);
    });

    it('refuses what append refuses, and the log is as it was', () => {
      const s = sessionWith([ev.turnStart('t1')]);
      const before = structuredClone(s.events);
      assert.throws(() => s.adopt({ type: 'tool/result', callId: 'nobody', name: 'read', content: '', isError: false }), { code: 'UNKNOWN_CALL' });
      assert.throws(() => s.adopt({ type: 'assistant/message', text: 'x', model: 7 } as never), { code: 'BAD_FIELD' });
      assert.throws(() => s.adopt({ type: 'session/end-seed', seedLength: 1 }), { code: 'BAD_SEED' });
      assert.deepEqual(s.events, before);
      assert.deepEqual([...s.pendingCalls], []);
    });

    it('tells onAppend listeners, as append does', () => {
      const s = Session.create(header());
      const seen: number[] = [];
      s.onAppend((e) => seen.push(e.seq));
      s.adopt(ev.user('one'));
      s.append(ev.user('two'));
      assert.deepEqual(seen, [0, 1]);
    });
  });

  describe('onAppend', () => {
    it('tells every listener about each appended event, in order', () => {
      const s = Session.create(header());
      const a: SessionEvent[] = [];
      const b: number[] = [];
      s.onAppend((e) => a.push(e));
      s.onAppend((e) => b.push(e.seq));
      appendTurn(s);
      assert.deepEqual(
        a.map((e) => [e.seq, e.type]),
        [
          [0, 'turn/start'],
          [1, 'user/message'],
          [2, 'assistant/message'],
          [3, 'turn/end'],
        ],
      );
      assert.deepEqual(a, s.events, 'listeners see the stored events, seq and at included');
      assert.deepEqual(b, [0, 1, 2, 3]);
    });

    it('is told only after the event is in the log', () => {
      const s = Session.create(header());
      const seen: number[] = [];
      s.onAppend(() => seen.push(s.length));
      s.append(ev.user('a'));
      s.append(ev.user('b'));
      assert.deepEqual(seen, [1, 2]);
    });

    it('is not told about a refused append', () => {
      const s = Session.create(header());
      const seen: SessionEvent[] = [];
      s.onAppend((e) => seen.push(e));
      expectRefusal(s, (x) => x.append(ev.assistant('no turn')), { code: 'TURN_NOT_OPEN' });
      assert.deepEqual(seen, []);
    });

    it('stops telling a listener once it unsubscribes, others still hear', () => {
      const s = Session.create(header());
      const a: number[] = [];
      const b: number[] = [];
      const offA = s.onAppend((e) => a.push(e.seq));
      s.onAppend((e) => b.push(e.seq));
      s.append(ev.user('one'));
      offA();
      s.append(ev.user('two'));
      assert.deepEqual(a, [0]);
      assert.deepEqual(b, [0, 1]);
    });

    it('is not told about events a session was restored or seeded from', () => {
      const seen: number[] = [];
      const parent = sessionWith(wholeTurn('t1'));
      parent.onAppend((e) => seen.push(e.seq));
      const restored = Session.restore(parent.header, parent.events);
      restored.onAppend((e) => seen.push(e.seq));
      const fork = Session.fromSeed({ id: 'fork-1', createdAt: T0, origin: 'fork', parentSession: 'root' }, parent.events);
      fork.onAppend((e) => seen.push(e.seq));
      assert.equal(seen.length, 0);
      restored.append(ev.user('live'));
      fork.append(ev.user('live'));
      assert.deepEqual(seen, [4, 5]);
    });
  });
});

function appendTurn(s: Session): void {
  for (const d of wholeTurn('t1')) s.append(d);
}
