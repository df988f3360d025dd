import * as assert from 'node:assert/strict';
import { type EventDraft, type EventType, Session, type SessionEvent } from '../../../src/core/session';
import { EVENT_RULES } from '../../../src/core/session/validate';
import { ev, expectError, expectRefusal, header, raw, SOURCES, sessionWith, T0 } from './fixtures';

/**
 * For every event type: the events that must come before it (so it is accepted) and a
 * valid event carrying every field its rules know, optional ones included.
 */
const VALID: Record<EventType, { before: EventDraft[]; event: Record<string, unknown> }> = {
  'user/message': {
    before: [ev.user('old'), ev.compactionStart('c1')],
    event: {
      type: 'user/message',
      text: 'summary of seq 0',
      source: { kind: 'user' },
      surfaceOp: 'replace',
      replaces: { fromSeq: 0, toSeq: 0 },
      compactionId: 'c1',
      messageId: 'm1',
    },
  },
  'assistant/message': {
    before: [ev.turnStart('t1')],
    event: {
      type: 'assistant/message',
      text: 'calling',
      model: 'test-model',
      reasoning: 'because',
      toolCalls: [{ id: 'c1', name: 'read', arguments: '{}' }],
      usage: { promptTokens: 10, completionTokens: 5, cacheHitTokens: 3, cacheMissTokens: 7 },
      estimated: true,
    },
  },
  'tool/result': {
    before: [ev.turnStart('t1'), ev.assistant('', [['c1', 'read']])],
    event: {
      type: 'tool/result',
      callId: 'c1',
      name: 'read',
      content: 'file text',
      isError: false,
      refusal: { outcome: 'policy-never', summary: '$ npm test' },
    },
  },
  'turn/start': { before: [], event: { type: 'turn/start', turnId: 't1' } },
  'turn/end': {
    before: [ev.turnStart('t1')],
    event: { type: 'turn/end', turnId: 't1', stopReason: 'error', error: 'provider unreachable', errorCode: 'connection', unreached: true },
  },
  'request/header': {
    before: [ev.turnStart('t1')],
    event: { type: 'request/header', model: 'm', provider: 'p', bytes: 100, headBytes: 40, headHash: 'h', prefixHash: 'p' },
  },
  'inbox/accepted': { before: [], event: { type: 'inbox/accepted', messageId: 'm1', text: 'later', source: { kind: 'followup' } } },
  'inbox/claimed': { before: [ev.accepted('m1')], event: { type: 'inbox/claimed', messageId: 'm1' } },
  'inbox/withdrawn': { before: [ev.accepted('m1')], event: { type: 'inbox/withdrawn', messageId: 'm1' } },
  'inbox/paused': { before: [], event: { type: 'inbox/paused' } },
  'sandbox/mode': { before: [], event: { type: 'sandbox/mode', mode: 'read-only', source: 'user' } },
  'approval/policy': { before: [], event: { type: 'approval/policy', policy: 'never', source: 'delegation' } },
  'approval/grant': {
    before: [],
    event: {
      type: 'approval/grant',
      grantId: 'g1',
      tool: 'run_command',
      scope: { kind: 'command-prefix', value: 'npm test' },
      sandbox: 'workspace-write',
      revoked: true,
    },
  },
  'subagent/descriptor': {
    before: [],
    event: {
      type: 'subagent/descriptor',
      version: 2,
      mode: 'continuable',
      provider: 'local',
      label: 'tests',
      modelProvider: 'deepseek',
      model: 'deepseek-chat',
      persona: 'a careful tester',
      personaComplete: true,
      toolFilter: ['read', 'grep'],
      agent: 'tester',
      workflow: { runId: 'r1', index: 0 },
      isolation: 'worktree',
      placement: { name: 'far', kind: 'ssh', where: 'me@build:22', rttMs: 12 },
    },
  },
  'subagent/remote': {
    before: [],
    event: {
      type: 'subagent/remote',
      program: 'codex',
      version: 'codex-cli 0.171.0',
      externalId: 'thread-1',
      pgid: 4242,
      startTime: 123456,
      bootId: '5f2c8e0a-0000-4000-8000-000000000000',
      store: '/stores/remote/child',
      announcedBy: 'root.c1',
    },
  },
  // Only Session.fromSeed writes it; checked through Session.restore below.
  'session/end-seed': {
    before: [ev.accepted('m1'), ev.turnStart('t1'), ev.turnEnd('t1')],
    event: { type: 'session/end-seed', seedLength: 3, droppedInbox: ['m1'] },
  },
  'compaction/start': { before: [], event: { type: 'compaction/start', compactionId: 'c1', reason: 'threshold', model: 'm', bytes: 1200 } },
  'compaction/summary': { before: [ev.compactionStart('c1')], event: { type: 'compaction/summary', compactionId: 'c1', text: 'sum' } },
  'compaction/end': {
    before: [ev.compactionStart('c1')],
    event: {
      type: 'compaction/end',
      compactionId: 'c1',
      outcome: 'aborted',
      model: 'm',
      usage: { promptTokens: 100, completionTokens: 3 },
      estimated: true,
    },
  },
  'goal/change': {
    before: [],
    event: { type: 'goal/change', goal: { objective: 'ship', phase: 'active', maxGoalRounds: 3, roundsStarted: 0, revision: 1, operation: 'set' } },
  },
  'budget/set': { before: [], event: { type: 'budget/set', budget: { maxTokens: 50_000, maxCostUsd: 2.5 }, source: 'user' } },
  'workflow/start': {
    before: [],
    event: {
      type: 'workflow/start',
      runId: 'r1',
      data: {
        callId: 'c1',
        name: 'review',
        description: 'd',
        scriptSha256: 'ab',
        scriptBytes: 9,
        limits: { maxTotalAgents: 5, concurrency: 2, wallClockMs: 1000 },
      },
    },
  },
  'workflow/phase': { before: [], event: { type: 'workflow/phase', runId: 'r1', data: { index: 0, title: 'scan' } } },
  'workflow/log': { before: [], event: { type: 'workflow/log', runId: 'r1', data: { message: 'x', truncated: true } } },
  'workflow/agent': {
    before: [],
    event: { type: 'workflow/agent', runId: 'r1', data: { index: 0, childId: 's.a', label: 'a', status: 'done', stopReason: 'completed' } },
  },
  'workflow/end': {
    before: [],
    event: {
      type: 'workflow/end',
      runId: 'r1',
      data: { status: 'failed', code: 'AGENT_CAP', error: 'e', agents: 1, tokens: 0, resultBytes: 0, logsDropped: 0 },
    },
  },
  'hook/run': {
    before: [],
    event: {
      type: 'hook/run',
      event: 'PreToolUse',
      command: './block.sh',
      source: 'workspace',
      outcome: 'blocked',
      tool: 'run_command',
      exitCode: 2,
      durationMs: 12,
      reason: 'rm -rf is not allowed here',
      decision: 'deny',
      truncated: true,
    },
  },
  checkpoint: {
    before: [],
    event: {
      type: 'checkpoint',
      turnId: 't1',
      changes: [{ path: '/w/a.ts', root: '/w', before: null, after: 'a'.repeat(40), callId: 'c1', tool: 'write_file' }],
      skipped: [{ path: '/w/big.bin', reason: 'too-large' }],
      rewind: { toSeq: 3, subtree: false, sessions: ['s-1'] },
    },
  },
  worktree: {
    before: [],
    event: {
      type: 'worktree',
      state: 'applied',
      repo: '/work/repo',
      path: '/work/.arbor/worktrees/s-1.abc123',
      root: '/work/.arbor/worktrees/s-1.abc123',
      branch: 'arbor/tests-abc123',
      base: 'a'.repeat(40),
      owner: 's-1.abc123',
      head: 'b'.repeat(40),
      files: 2,
    },
  },
};

/** These three come together or not at all (see compaction.test.ts). */
const REPLACEMENT_FIELDS = ['surfaceOp', 'replaces', 'compactionId'];

const TYPES = Object.keys(EVENT_RULES) as EventType[];

/** A value the field's own rule refuses: the wrong JavaScript type. */
function mistyped(check: (v: unknown) => boolean): unknown {
  for (const v of [42, 'not-a-number', true]) if (!check(v)) return v;
  throw new Error('no mistyped value found');
}

function without(o: Record<string, unknown>, field: string): Record<string, unknown> {
  const copy = { ...o };
  delete copy[field];
  return copy;
}

/** The events before `event` as stored records, for Session.restore. */
function storedBefore(before: EventDraft[]): SessionEvent[] {
  return structuredClone(sessionWith(before).events) as SessionEvent[];
}

function restoreWith(type: EventType, event: Record<string, unknown>): Session {
  const prefix = storedBefore(VALID[type].before);
  return Session.restore(header(), [...prefix, { ...event, seq: prefix.length, at: T0 } as unknown as SessionEvent]);
}

describe('append validation: event shapes', () => {
  it('has a valid fixture for every event type in EVENT_RULES, with every field its rules name', () => {
    assert.deepEqual(Object.keys(VALID).sort(), [...TYPES].sort());
    for (const type of TYPES) {
      assert.equal(VALID[type].event.type, type);
      for (const rule of EVENT_RULES[type]) assert.ok(rule.field in VALID[type].event, `${type} fixture lacks ${rule.field}`);
    }
  });

  for (const type of TYPES) {
    const { before, event } = VALID[type];
    const seq = before.length;
    const viaAppend = type !== 'session/end-seed';

    describe(type, () => {
      it('accepts the valid event', () => {
        if (viaAppend) {
          const s = sessionWith(before);
          const stored = s.append(raw(event));
          assert.deepEqual(stored, { ...event, seq, at: stored.at });
        }
        assert.equal(restoreWith(type, event).length, seq + 1);
      });

      for (const rule of EVENT_RULES[type]) {
        if (!rule.optional) {
          it(`refuses it without ${rule.field}: MISSING_FIELD naming '${rule.field}' and seq ${seq}`, () => {
            const bad = without(event, rule.field);
            if (viaAppend) {
              const err = expectRefusal(sessionWith(before), (s) => s.append(raw(bad)), { code: 'MISSING_FIELD', field: rule.field, seq });
              assert.ok(err.message.startsWith(`${type} needs ${rule.field}`), err.message);
            }
            expectError(() => restoreWith(type, bad), { code: 'MISSING_FIELD', field: rule.field, seq });
          });
        } else if (viaAppend && !(type === 'user/message' && REPLACEMENT_FIELDS.includes(rule.field))) {
          it(`accepts it without the optional ${rule.field}`, () => {
            assert.doesNotThrow(() => sessionWith(before).append(raw(without(event, rule.field))));
          });
        }

        const value = mistyped(rule.check);
        it(`refuses it with ${rule.field}: ${JSON.stringify(value)}: BAD_FIELD naming '${rule.field}' and seq ${seq}`, () => {
          const bad = { ...event, [rule.field]: value };
          if (viaAppend) {
            const err = expectRefusal(sessionWith(before), (s) => s.append(raw(bad)), { code: 'BAD_FIELD', field: rule.field, seq });
            assert.ok(err.message.startsWith(`${type}.${rule.field} must be ${rule.expect}`), err.message);
          }
          expectError(() => restoreWith(type, bad), { code: 'BAD_FIELD', field: rule.field, seq });
        });
      }
    });
  }
});

describe('append validation: values of the right type that are still wrong', () => {
  // [what, event type, the field set to the bad value, the bad value]
  const cases: Array<[string, EventType, string, unknown]> = [
    ['an unknown message source kind', 'user/message', 'source', { kind: 'robot' }],
    ['a source without a kind', 'user/message', 'source', { fromSession: 'child' }],
    ['a source that is an array', 'user/message', 'source', [{ kind: 'user' }]],
    ['a null text (null is not absence)', 'user/message', 'text', null],
    ['a surfaceOp other than replace', 'user/message', 'surfaceOp', 'append'],
    ['a replaced range that runs backwards', 'user/message', 'replaces', { fromSeq: 3, toSeq: 1 }],
    ['a replaced range with a negative seq', 'user/message', 'replaces', { fromSeq: -1, toSeq: 0 }],
    ['an empty compactionId', 'user/message', 'compactionId', ''],
    ['an empty messageId', 'user/message', 'messageId', ''],
    [
      'tool call ids repeated in one message',
      'assistant/message',
      'toolCalls',
      [
        { id: 'c1', name: 'read', arguments: '{}' },
        { id: 'c1', name: 'grep', arguments: '{}' },
      ],
    ],
    ['a tool call without a name', 'assistant/message', 'toolCalls', [{ id: 'c1', arguments: '{}' }]],
    ['a tool call with an empty id', 'assistant/message', 'toolCalls', [{ id: '', name: 'read', arguments: '{}' }]],
    ['tool call arguments as an object, not raw JSON text', 'assistant/message', 'toolCalls', [{ id: 'c1', name: 'read', arguments: {} }]],
    ['negative prompt tokens', 'assistant/message', 'usage', { promptTokens: -1, completionTokens: 0 }],
    ['fractional cache-hit tokens', 'assistant/message', 'usage', { promptTokens: 1, completionTokens: 0, cacheHitTokens: 0.5 }],
    ['usage without completion tokens', 'assistant/message', 'usage', { promptTokens: 1 }],
    ['an empty callId', 'tool/result', 'callId', ''],
    ['an empty tool name', 'tool/result', 'name', ''],
    ["isError as the string 'false'", 'tool/result', 'isError', 'false'],
    ['a refusal without its outcome', 'tool/result', 'refusal', { summary: '$ npm test' }],
    ['a refusal that is a string', 'tool/result', 'refusal', 'refused'],
    ['an empty turnId', 'turn/start', 'turnId', ''],
    ['an unknown stopReason', 'turn/end', 'stopReason', 'done'],
    ['unreached as false (it is true or absent)', 'turn/end', 'unreached', false],
    ['a negative byte count', 'request/header', 'bytes', -1],
    ['a fractional head byte count', 'request/header', 'headBytes', 1.5],
    ['an empty prefix hash', 'request/header', 'prefixHash', ''],
    ['an empty inbox messageId', 'inbox/accepted', 'messageId', ''],
    ['an unknown sandbox mode', 'sandbox/mode', 'mode', 'danger'],
    ['a policy source other than user or delegation', 'sandbox/mode', 'source', 'model'],
    ['an unknown approval policy', 'approval/policy', 'policy', 'always'],
    ['descriptor version 1', 'subagent/descriptor', 'version', 1],
    ['an unknown descriptor mode', 'subagent/descriptor', 'mode', 'forever'],
    ['a tool filter holding a non-string', 'subagent/descriptor', 'toolFilter', ['read', 7]],
    ['an empty agent name', 'subagent/descriptor', 'agent', ''],
    ['an unknown compaction reason', 'compaction/start', 'reason', 'auto'],
    ['a compaction request of negative bytes', 'compaction/start', 'bytes', -1],
    ['an unknown compaction outcome', 'compaction/end', 'outcome', 'done'],
    ['a compaction usage with negative tokens', 'compaction/end', 'usage', { promptTokens: -1, completionTokens: 0 }],
    ['a compaction estimated as false (it is true or absent)', 'compaction/end', 'estimated', false],
    ['an assistant message estimated as a string', 'assistant/message', 'estimated', 'yes'],
    ['a goal that is an array', 'goal/change', 'goal', []],
    ['an empty workflow runId', 'workflow/log', 'runId', ''],
    ['workflow data that is an array', 'workflow/end', 'data', [1]],
    ['a workflow/end with an unknown status', 'workflow/end', 'data', { status: 'done', agents: 0, tokens: 0, resultBytes: 0, logsDropped: 0 }],
    ['a workflow/end without its agent count', 'workflow/end', 'data', { status: 'completed', tokens: 0, resultBytes: 0, logsDropped: 0 }],
    ['a workflow/agent with a fractional index', 'workflow/agent', 'data', { index: 1.5, childId: 'c', status: 'started' }],
    ['a workflow/agent with an unknown stopReason', 'workflow/agent', 'data', { index: 1, childId: 'c', status: 'done', stopReason: 'ok' }],
    ['a workflow/log whose message is not text', 'workflow/log', 'data', { message: { html: 'x' } }],
    ['a workflow/start without limits', 'workflow/start', 'data', { name: 'n', description: 'd', scriptSha256: 'ab', scriptBytes: 1 }],
    ['a descriptor whose workflow has no run id', 'subagent/descriptor', 'workflow', { index: 0 }],
    ['a placement of an unknown kind', 'subagent/descriptor', 'placement', { name: 'far', kind: 'vm', where: 'x' }],
    ['a placement with a negative round trip', 'subagent/descriptor', 'placement', { name: 'far', kind: 'ssh', where: 'x', rttMs: -1 }],
    ['a negative token budget', 'budget/set', 'budget', { maxTokens: -5 }],
    ['a NaN dollar budget', 'budget/set', 'budget', { maxCostUsd: Number.NaN }],
    ['a 1e308 dollar budget', 'budget/set', 'budget', { maxCostUsd: 1e308 }],
    ['a token budget as a string', 'budget/set', 'budget', { maxTokens: '5000' }],
    ['a budget with no limit', 'budget/set', 'budget', {}],
    ['a budget with an unknown limit', 'budget/set', 'budget', { maxTokens: 10, maxRequests: 3 }],
    ['a budget set by the model itself', 'budget/set', 'source', 'model'],
    ['a negative reported cost', 'assistant/message', 'usage', { promptTokens: 1, completionTokens: 0, costUsd: -0.1 }],
    ['an empty external id', 'subagent/remote', 'externalId', ''],
    ['process group 1 (init: never a child of ours)', 'subagent/remote', 'pgid', 1],
    ['a fractional process group', 'subagent/remote', 'pgid', 42.5],
    ['a negative start time', 'subagent/remote', 'startTime', -1],
    ['an empty boot id', 'subagent/remote', 'bootId', ''],
    ['an announcer that is no session id', 'subagent/remote', 'announcedBy', '../x'],
  ];

  for (const [what, type, field, value] of cases) {
    it(`refuses ${type} with ${what}: BAD_FIELD naming '${field}'`, () => {
      const { before, event } = VALID[type];
      expectRefusal(sessionWith(before), (s) => s.append(raw({ ...event, [field]: value })), {
        code: 'BAD_FIELD',
        field,
        seq: before.length,
      });
    });
  }

  it('accepts a null goal (the goal was cleared)', () => {
    assert.doesNotThrow(() => Session.create(header()).append({ type: 'goal/change', goal: null }));
  });

  it('accepts every message source kind and every stop reason', () => {
    const s = Session.create(header());
    for (const source of [...Object.values(SOURCES), { kind: 'delegation', runtime: true } as const]) s.append(ev.user('x', source));
    for (const [i, reason] of (['completed', 'interrupted', 'error', 'max-tokens', 'cancelled', 'budget'] as const).entries()) {
      s.append(ev.turnStart(`t${i}`));
      s.append(ev.turnEnd(`t${i}`, reason));
    }
    const sources = Object.keys(SOURCES).length + 1;
    assert.equal(s.length, sources + 12, `${sources} sources (one per kind, two for delegation), six turns`);
  });
});

describe('append validation: the envelope', () => {
  it('refuses an event that is not an object with BAD_EVENT naming the seq', () => {
    const prefix = storedBefore([ev.user('first')]);
    for (const bad of [null, 'user/message', 7, [prefix[0]]]) {
      expectError(() => Session.restore(header(), [...prefix, bad as unknown as SessionEvent]), { code: 'BAD_EVENT', field: undefined, seq: 1 });
    }
  });

  it('refuses an unknown type with UNKNOWN_TYPE naming type and the seq', () => {
    const s = sessionWith([ev.user('first')]);
    for (const type of ['user/msg', 'USER/MESSAGE', 'workflow/other', 'toString', '', 42, undefined]) {
      const err = expectRefusal(s, (x) => x.append(raw({ type, text: 'x', source: { kind: 'user' } })), { code: 'UNKNOWN_TYPE', field: 'type', seq: 1 });
      assert.ok(err.message.includes(JSON.stringify(type) ?? 'undefined'), err.message);
    }
  });

  it('checks the seq before anything else about the event', () => {
    const s = Session.create(header());
    expectRefusal(s, (x) => x.append(raw({ type: 'nope', seq: 3 })), { code: 'SEQ_GAP', field: 'seq', seq: 0 });
  });

  it('checks the type before the fields, and the time before the fields', () => {
    const s = Session.create(header());
    expectRefusal(s, (x) => x.append(raw({ type: 'nope' })), { code: 'UNKNOWN_TYPE' });
    expectRefusal(s, (x) => x.append(raw({ type: 'turn/start', at: 'never' })), { code: 'BAD_FIELD', field: 'at' });
  });

  it('refuses shape errors before ordering errors', () => {
    // No turn is open, but the missing field is what the caller must fix first.
    expectRefusal(Session.create(header()), (s) => s.append(raw({ type: 'assistant/message', model: 'm' })), {
      code: 'MISSING_FIELD',
      field: 'text',
      seq: 0,
    });
  });
});
