import * as assert from 'node:assert/strict';
import type { MessageSource } from '../../../src/core/session/events';
import { fromSessionOf, readMessageSource } from '../../../src/core/session/message-source';
import { SOURCES } from './fixtures';

/** What goes over the wire for a source (acp/updates.ts): its kind as `source`, then its fields. */
const onWire = (s: MessageSource): Record<string, unknown> => {
  const { kind, ...fields } = s;
  return { source: kind, ...fields };
};

describe('message sources: one union on kind, read back from untrusted fields by one table', () => {
  it('every kind, with exactly its fields, reads back as itself', () => {
    for (const s of [...Object.values(SOURCES), { kind: 'delegation', runtime: true } as const]) {
      const w = onWire(s);
      assert.deepEqual(readMessageSource(w.source, w), s, s.kind);
    }
  });

  it('a kind missing a field it needs, or with one of the wrong shape, reads as nothing', () => {
    const bad: [string, Record<string, unknown>][] = [
      ['followup', {}],
      ['subagent-report', { fromSession: 'c' }],
      ['subagent-report', { fromSession: 'c', mode: 'loud' }],
      ['subagent-settled', { fromSession: 'c' }],
      ['subagent-settled', { fromSession: 'c', stopReason: 'cut' }],
      ['goal', { revision: 1 }],
      ['goal', { revision: -1, round: 1 }],
      ['delegation', { fromSession: '' }],
      ['delegation', { runtime: 'yes' }],
    ];
    for (const [kind, fields] of bad) assert.equal(readMessageSource(kind, fields), undefined, `${kind} ${JSON.stringify(fields)}`);
  });

  it('an unknown kind, or a name every object has, reads as nothing', () => {
    for (const kind of ['report', 'toString', '__proto__', 'constructor', 42, undefined]) {
      assert.equal(readMessageSource(kind, { fromSession: 'c' }), undefined, String(kind));
    }
  });

  it('fields beyond a kind’s own are left out; a bad optional one is dropped', () => {
    assert.deepEqual(readMessageSource('followup', { fromSession: 'p', mode: 'quiet', extra: 1 }), { kind: 'followup', fromSession: 'p' });
    assert.deepEqual(readMessageSource('subagent-settled', { fromSession: 'c', stopReason: 'error', refused: 'two' }), {
      kind: 'subagent-settled',
      fromSession: 'c',
      stopReason: 'error',
    });
  });

  it('fromSessionOf names the author of the kinds that have one', () => {
    assert.equal(fromSessionOf(SOURCES.followup), 'user');
    assert.equal(fromSessionOf(SOURCES['subagent-report']), 'child');
    assert.equal(fromSessionOf(SOURCES.delegation), 'parent');
    assert.equal(fromSessionOf(SOURCES.user), undefined);
    assert.equal(fromSessionOf(SOURCES.goal), undefined);
    assert.equal(fromSessionOf({ kind: 'delegation', runtime: true }), undefined);
  });
});
