// Issue 21.6: a message the user sent to a child is the user's in the panel (its queue and its
// transcript), not a follow-up "from the parent"; the parent's follow-ups keep their sender.
import * as assert from 'node:assert/strict';
import type { SessionEvent } from '../../src/core/session/events';
import { shownSource } from '../../src/extension/presenter/message-source';
import { toEntry } from '../../src/extension/presenter/transcript';

describe('presenter: who a message is from', () => {
  it("shows a follow-up the user sent to a child as the user's own", () => {
    assert.deepEqual(shownSource({ kind: 'followup', fromSession: 'user' }), { source: 'user' });
    assert.deepEqual(shownSource({ kind: 'followup', fromSession: 's-root-1' }), { source: 'followup', fromSession: 's-root-1' });
    assert.deepEqual(shownSource({ kind: 'delegation', fromSession: 's-root-1' }), { source: 'delegation', fromSession: 's-root-1' });
    assert.deepEqual(shownSource({ kind: 'user' }), { source: 'user' });
  });

  it("the transcript entry of the user's message to a child says it is the user's", () => {
    const event = {
      type: 'user/message',
      seq: 4,
      at: '2025-06-01T09:00:00.000Z',
      text: 'also check the docs',
      source: { kind: 'followup', fromSession: 'user' },
    } as SessionEvent;
    assert.deepEqual(toEntry(event), { kind: 'user', seq: 4, at: '2025-06-01T09:00:00.000Z', text: 'also check the docs', source: 'user' });
  });
});
