import * as assert from 'node:assert/strict';
import { checkHeader, isSessionId, Session, type SessionHeader } from '../../../src/core/session';
import { expectError, forkHeader, header, sessionWith, T0, wholeTurn } from './fixtures';

describe('session header (DESIGN §2)', () => {
  it('accepts a minimal user header and one with every optional field', () => {
    assert.doesNotThrow(() => checkHeader(header()));
    const full: SessionHeader = {
      id: 'child.2_b-3',
      createdAt: T0,
      title: 'Refactor',
      origin: 'subagent',
      parentSession: 'root',
      delegationDepth: 2,
      seedLength: 4,
      cwd: '/tmp/ws',
      agentPreset: 'reviewer',
      agent: { name: 'planner', persona: 'You plan.', toolFilter: ['read_file'], model: 'm' },
    };
    assert.doesNotThrow(() => checkHeader(full));
  });

  it('refuses a header that is not an object, naming no field', () => {
    for (const h of [null, undefined, 'root', 42, []]) {
      expectError(() => checkHeader(h), { code: 'BAD_HEADER', field: undefined, seq: undefined });
    }
    expectError(() => Session.restore(null as unknown as SessionHeader, []), { code: 'BAD_HEADER', field: undefined });
  });

  const bad: Array<[what: string, over: Record<string, unknown>, field: string]> = [
    ['a missing id', { id: undefined }, 'id'],
    ['an empty id', { id: '' }, 'id'],
    ['an id with a path separator', { id: '../etc' }, 'id'],
    ['an id starting with a dot', { id: '.hidden' }, 'id'],
    ['an id longer than 128 characters', { id: 'a'.repeat(129) }, 'id'],
    ['a missing createdAt', { createdAt: undefined }, 'createdAt'],
    ['a createdAt that is not a time', { createdAt: 'yesterday' }, 'createdAt'],
    ['an unknown origin', { origin: 'robot' }, 'origin'],
    ['a title that is not a string', { title: 7 }, 'title'],
    ['a parentSession that is not a session id', { parentSession: 'a/b' }, 'parentSession'],
    ['a subagent without parentSession', { origin: 'subagent' }, 'parentSession'],
    ['a fork without parentSession', { origin: 'fork' }, 'parentSession'],
    ['a session that is its own parent', { origin: 'fork', parentSession: 'root' }, 'parentSession'],
    ['a negative delegationDepth', { delegationDepth: -1 }, 'delegationDepth'],
    ['a fractional delegationDepth', { delegationDepth: 1.5 }, 'delegationDepth'],
    ['a seedLength that is not a number', { seedLength: '3' }, 'seedLength'],
    ['a cwd that is not a string', { cwd: ['/'] }, 'cwd'],
    ['an agentPreset that is not a string', { agentPreset: {} }, 'agentPreset'],
    ['an agent without a name', { agent: { persona: 'x' } }, 'agent'],
    ['an agent whose tool filter holds a non-string', { agent: { name: 'a', toolFilter: [1] } }, 'agent'],
  ];
  for (const [what, over, field] of bad) {
    it(`refuses ${what} with BAD_HEADER naming '${field}'`, () => {
      const h = { ...header(), ...over } as unknown as SessionHeader;
      expectError(() => checkHeader(h), { code: 'BAD_HEADER', field, seq: undefined });
      // The same rule guards every way a session comes to be.
      if (field !== 'seedLength') expectError(() => Session.create(h), { code: 'BAD_HEADER', field });
      expectError(() => Session.restore(h, []), { code: 'BAD_HEADER', field });
    });
  }

  it('isSessionId accepts the portable alphabet only', () => {
    for (const ok of ['a', 'A9', 'root', 'x.y_z-1', '0'.repeat(128)]) assert.equal(isSessionId(ok), true, ok);
    for (const no of ['', '-a', '_a', 'a b', 'a/b', 'a\\b', 'é', '0'.repeat(129), 7, null]) assert.equal(isSessionId(no), false, String(no));
  });

  it('Session.create refuses a seedLength: only a fork has a seed', () => {
    expectError(() => Session.create(header({ seedLength: 0 })), { code: 'BAD_HEADER', field: 'seedLength', seq: undefined });
  });

  it('a new session is empty, not a fork, and exposes its id', () => {
    const s = Session.create(header());
    assert.equal(s.id, 'root');
    assert.equal(s.length, 0);
    assert.deepEqual(s.events, []);
    assert.equal(s.seedLength, 0);
    assert.equal(s.firstLiveSeq, 0);
    assert.equal(s.openTurnId, null);
    assert.equal(s.openCompactionId, null);
    assert.deepEqual([...s.pendingCalls], []);
    assert.deepEqual(s.unclaimedInbox, []);
  });

  it('keeps its own copy of the header', () => {
    const h = header({ title: 'before', cwd: '/w' });
    const s = Session.create(h);
    h.title = 'after';
    h.id = 'other';
    assert.equal(s.header.title, 'before');
    assert.equal(s.id, 'root');

    const fh = forkHeader({ title: 'fork' });
    const f = Session.fromSeed(fh, sessionWith(wholeTurn('t1')).events);
    fh.title = 'changed';
    assert.equal(f.header.title, 'fork');
  });
});
