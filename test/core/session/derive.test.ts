import * as assert from 'node:assert/strict';
import { type DerivedMessage, deriveMessages, type EventDraft, MISSING_RESULT, Session } from '../../../src/core/session';
import { appendAll, ev, forkHeader, sessionWith, wholeTurn } from './fixtures';

/** Just role and content, for specs about which messages there are and in what order. */
function brief(s: Session): string[] {
  return deriveMessages(s.events).map((m) => `${m.role}:${m.content}`);
}

describe('deriveMessages', () => {
  it('folds user, assistant and tool events into model messages, tagged with their seq', () => {
    const s = sessionWith([
      ev.turnStart('t1'),
      { type: 'user/message', text: 'read a', source: { kind: 'user' } },
      {
        type: 'assistant/message',
        text: 'reading',
        reasoning: 'need the file',
        model: 'm',
        toolCalls: [{ id: 'c1', name: 'read', arguments: '{"path":"a"}' }],
        usage: { promptTokens: 10, completionTokens: 3 },
      },
      ev.result('c1', 'read', 'contents of a'),
      ev.assistant('a says hi'),
      ev.turnEnd('t1'),
    ]);
    const expected: DerivedMessage[] = [
      { role: 'user', content: 'read a', source: { kind: 'user' }, seq: 1 },
      {
        role: 'assistant',
        content: 'reading',
        reasoning: 'need the file',
        toolCalls: [{ id: 'c1', name: 'read', arguments: '{"path":"a"}' }],
        seq: 2,
      },
      { role: 'tool', toolCallId: 'c1', name: 'read', content: 'contents of a', isError: false, seq: 3 },
      { role: 'assistant', content: 'a says hi', seq: 4 },
    ];
    assert.deepEqual(deriveMessages(s.events), expected);
  });

  it('carries the source of runtime-delivered user messages and tool errors as they are', () => {
    const s = sessionWith([
      { type: 'user/message', text: 'child done', source: { kind: 'subagent-report', fromSession: 'kid', mode: 'quiet' } },
      ev.turnStart('t1'),
      ev.assistant('', [['c1', 'run']]),
      ev.result('c1', 'run', 'exit 1', true),
      ev.turnEnd('t1'),
    ]);
    const [report, , result] = deriveMessages(s.events);
    assert.deepEqual(report, { role: 'user', content: 'child done', source: { kind: 'subagent-report', fromSession: 'kid', mode: 'quiet' }, seq: 0 });
    assert.equal(result.role === 'tool' && result.isError, true);
  });

  it('omits toolCalls and reasoning from an assistant message that has none', () => {
    const s = sessionWith([ev.turnStart('t1'), { type: 'assistant/message', text: 'hi', model: 'm', toolCalls: [] }, ev.turnEnd('t1')]);
    const [m] = deriveMessages(s.events);
    assert.deepEqual(m, { role: 'assistant', content: 'hi', seq: 1 });
    assert.ok(!('toolCalls' in m) && !('reasoning' in m));
  });

  it('leaves runtime events out of history', () => {
    const runtime: EventDraft[] = [
      ev.accepted('m1'),
      ev.claimed('m1'),
      ev.sandbox('read-only', 'user'),
      ev.approval('never', 'delegation'),
      ev.descriptor('kid'),
      { type: 'goal/change', goal: { objective: 'x', phase: 'active', maxGoalRounds: 2, roundsStarted: 0, revision: 1, operation: 'set' } },
      {
        type: 'workflow/start',
        runId: 'r1',
        data: { name: 'n', description: 'd', scriptSha256: 'ab', scriptBytes: 1, limits: { maxTotalAgents: 1, concurrency: 1, wallClockMs: 1 } },
      },
      { type: 'workflow/phase', runId: 'r1', data: { index: 0, title: 'p' } },
      { type: 'workflow/log', runId: 'r1', data: { message: 'm' } },
      { type: 'workflow/agent', runId: 'r1', data: { index: 0, childId: 'c', status: 'started' } },
      { type: 'workflow/end', runId: 'r1', data: { status: 'completed', agents: 0, tokens: 0, resultBytes: 2, logsDropped: 0 } },
      ev.compactionStart('c1'),
      ev.compactionSummary('c1'),
      ev.compactionEnd('c1', 'aborted'),
    ];
    const s = sessionWith([ev.turnStart('t1'), ev.requestHeader(), ev.user('hi'), ev.assistant('hello'), ev.turnEnd('t1'), ...runtime]);
    assert.deepEqual(brief(s), ['user:hi', 'assistant:hello']);
    const fork = Session.fromSeed(forkHeader(), s.events.slice(0, 5));
    assert.deepEqual(brief(fork), ['user:hi', 'assistant:hello'], 'session/end-seed is not history either');
  });

  it('is empty for an empty log', () => {
    assert.deepEqual(deriveMessages([]), []);
  });

  describe('calls left unanswered by an ended turn', () => {
    it('get a synthetic MISSING_RESULT tool message each, after the answered ones, at the turn/end seq', () => {
      const s = sessionWith([
        ev.turnStart('t1'),
        ev.user('go'),
        ev.assistant('', [
          ['c1', 'read'],
          ['c2', 'grep'],
          ['c3', 'run'],
        ]),
        ev.result('c2', 'grep', 'found'),
        ev.turnEnd('t1', 'interrupted'),
      ]);
      const tools = deriveMessages(s.events).filter((m) => m.role === 'tool');
      assert.deepEqual(tools, [
        { role: 'tool', toolCallId: 'c2', name: 'grep', content: 'found', isError: false, seq: 3 },
        { role: 'tool', toolCallId: 'c1', name: 'read', content: MISSING_RESULT, isError: true, seq: 4 },
        { role: 'tool', toolCallId: 'c3', name: 'run', content: MISSING_RESULT, isError: true, seq: 4 },
      ]);
    });

    it('are answered once: the next turn starts with none outstanding', () => {
      const s = sessionWith([
        ev.turnStart('t1'),
        ev.assistant('', [['c1', 'read']]),
        ev.turnEnd('t1', 'interrupted'),
        ev.turnStart('t2'),
        ev.user('again'),
        ev.assistant('', [['c1', 'read']]),
        ev.result('c1', 'read', 'now'),
        ev.turnEnd('t2'),
      ]);
      assert.deepEqual(brief(s), ['assistant:', `tool:${MISSING_RESULT}`, 'user:again', 'assistant:', 'tool:now']);
    });

    it('are not invented while the turn is still running', () => {
      const s = sessionWith([ev.turnStart('t1'), ev.assistant('', [['c1', 'read']])]);
      assert.deepEqual(brief(s), ['assistant:']);
    });
  });

  describe('compaction', () => {
    /** Three whole turns, seq 0–11: user at 1, 5, 9; assistant at 2, 6, 10. */
    function threeTurns(): Session {
      return sessionWith([...wholeTurn('t1', 'u1', 'a1'), ...wholeTurn('t2', 'u2', 'a2'), ...wholeTurn('t3', 'u3', 'a3')]);
    }
    const ALL = ['user:u1', 'assistant:a1', 'user:u2', 'assistant:a2', 'user:u3', 'assistant:a3'];

    it('a committed compaction puts its summary in place of the range and keeps the tail', () => {
      const s = threeTurns();
      appendAll(s, [ev.compactionStart('c1'), ev.compactionSummary('c1', 'S1'), ev.replacement('c1', 0, 7, 'S1'), ev.compactionEnd('c1')]);
      assert.deepEqual(brief(s), ['user:S1', 'user:u3', 'assistant:a3']);
      const [summary] = deriveMessages(s.events);
      assert.equal(summary.seq, 14, 'the summary is tagged with the seq of the replacing message');
    });

    it('an aborted compaction changes nothing', () => {
      const s = threeTurns();
      appendAll(s, [ev.compactionStart('c1'), ev.replacement('c1', 0, 7, 'S1'), ev.compactionEnd('c1', 'aborted')]);
      assert.deepEqual(brief(s), ALL);
    });

    it('an unfinished compaction changes nothing', () => {
      const s = threeTurns();
      appendAll(s, [ev.compactionStart('c1'), ev.replacement('c1', 0, 7, 'S1'), ev.compactionSummary('c1', 'S1')]);
      assert.deepEqual(brief(s), ALL);
    });

    it('the log keeps every raw event: compaction never deletes', () => {
      const s = threeTurns();
      const raw = structuredClone(s.events);
      appendAll(s, [ev.compactionStart('c1'), ev.replacement('c1', 0, 7, 'S1'), ev.compactionEnd('c1')]);
      assert.deepEqual(s.events.slice(0, 12), raw);
    });

    it('new messages appended after a compaction follow the summary and the tail', () => {
      const s = threeTurns();
      appendAll(s, [ev.compactionStart('c1'), ev.replacement('c1', 0, 7, 'S1'), ev.compactionEnd('c1')]);
      appendAll(s, wholeTurn('t4', 'u4', 'a4'));
      appendAll(s, [ev.turnStart('t5'), ev.user('u5'), ev.assistant('', [['c1', 'read']]), ev.result('c1', 'read', 'r5'), ev.turnEnd('t5')]);
      assert.deepEqual(brief(s), ['user:S1', 'user:u3', 'assistant:a3', 'user:u4', 'assistant:a4', 'user:u5', 'assistant:', 'tool:r5']);
    });

    it('replaces a range in the middle, keeping what comes before and after', () => {
      const s = threeTurns();
      appendAll(s, [ev.compactionStart('c1'), ev.replacement('c1', 4, 7, 'S-mid'), ev.compactionEnd('c1')]);
      assert.deepEqual(brief(s), ['user:u1', 'assistant:a1', 'user:S-mid', 'user:u3', 'assistant:a3']);
    });

    it('a range holding no message puts the summary where the range was', () => {
      const s = sessionWith([
        ev.user('u0'),
        ev.sandbox('read-only', 'user'),
        ev.user('u2'),
        ev.compactionStart('c1'),
        ev.replacement('c1', 1, 1, 'S'),
        ev.compactionEnd('c1'),
      ]);
      assert.deepEqual(brief(s), ['user:u0', 'user:S', 'user:u2']);
    });

    it('removes the synthetic results of a replaced turn with it', () => {
      const s = sessionWith([
        ev.turnStart('t1'),
        ev.user('u1'),
        ev.assistant('', [['c1', 'read']]),
        ev.turnEnd('t1', 'interrupted'),
        ...wholeTurn('t2', 'u2', 'a2'),
      ]);
      appendAll(s, [ev.compactionStart('c1'), ev.replacement('c1', 0, 3, 'S1'), ev.compactionEnd('c1')]);
      assert.deepEqual(brief(s), ['user:S1', 'user:u2', 'assistant:a2']);
    });

    it('a second compaction may summarise the first summary along with what followed', () => {
      const s = threeTurns();
      appendAll(s, [ev.compactionStart('c1'), ev.replacement('c1', 0, 3, 'S1'), ev.compactionEnd('c1')]); // 12–14
      appendAll(s, [ev.compactionStart('c2'), ev.replacement('c2', 0, 14, 'S2'), ev.compactionEnd('c2')]); // 15–17
      assert.deepEqual(brief(s), ['user:S2']);
    });

    it('a second compaction of the tail after an earlier summary keeps the earlier summary first', () => {
      const s = threeTurns();
      appendAll(s, [ev.compactionStart('c1'), ev.replacement('c1', 0, 3, 'S1'), ev.compactionEnd('c1')]);
      assert.deepEqual(brief(s), ['user:S1', 'user:u2', 'assistant:a2', 'user:u3', 'assistant:a3']);
      appendAll(s, [ev.compactionStart('c2'), ev.replacement('c2', 4, 7, 'S2'), ev.compactionEnd('c2')]);
      assert.deepEqual(brief(s), ['user:S1', 'user:S2', 'user:u3', 'assistant:a3']);
    });

    it('a committed compaction in a fork seed still applies in the fork', () => {
      const parent = threeTurns();
      appendAll(parent, [ev.compactionStart('c1'), ev.replacement('c1', 0, 7, 'S1'), ev.compactionEnd('c1'), ...wholeTurn('t4', 'u4', 'a4')]);
      const fork = Session.fromSeed(forkHeader(), parent.events);
      fork.append(ev.turnStart('t5'));
      fork.append(ev.user('u5'));
      assert.deepEqual(brief(fork), ['user:S1', 'user:u3', 'assistant:a3', 'user:u4', 'assistant:a4', 'user:u5']);
    });
  });
});
