import assert from 'node:assert/strict';
import type { SessionHeader } from '../../../src/core/session/events';
import { type LiveState, type SessionStatus, sessionStatus } from '../../../src/core/session/status';
import { type SessionSummary, summarize } from '../../../src/core/session/summary';
import { statusBarView } from '../../../src/extension/presenter/status-bar';

// The one status fold (issue 9.8): every reader gets its status from sessionStatus over the
// session's summary and what the live process knows.
describe('session: the one status fold', () => {
  const at = '2026-01-01T00:00:00.000Z';
  const root: SessionHeader = { id: 'r', createdAt: at, origin: 'user', cwd: '/w' };
  const child: SessionHeader = { id: 'r.c', createdAt: at, origin: 'subagent', parentSession: 'r', delegationDepth: 1, cwd: '/w' };
  const ended = (h: SessionHeader, stopReason: 'completed' | 'error' | 'interrupted' | 'cancelled' | 'max-tokens'): SessionSummary =>
    summarize(h, [
      { seq: 0, at, type: 'turn/start', turnId: 't' },
      { seq: 1, at, type: 'turn/end', turnId: 't', stopReason },
    ]);
  const open = (h: SessionHeader) => summarize(h, [{ seq: 0, at, type: 'turn/start', turnId: 't' }]);
  const none: LiveState = { running: false, waitingForChildren: false };

  const table: [string, SessionSummary, LiveState | undefined, SessionStatus][] = [
    ['a new conversation', summarize(root, []), undefined, 'idle'],
    ['a conversation between turns', ended(root, 'completed'), none, 'idle'],
    ['a child whose turn completed', ended(child, 'completed'), none, 'settled'],
    ['a child that hit max tokens', ended(child, 'max-tokens'), none, 'settled'],
    ['an interrupted turn', ended(root, 'interrupted'), none, 'interrupted'],
    ['a cancelled child', ended(child, 'cancelled'), none, 'interrupted'],
    ['a failed turn', ended(child, 'error'), none, 'failed'],
    ['an open turn no process runs (a crash)', open(child), undefined, 'interrupted'],
    ['an open turn this process runs', open(child), { running: true, waitingForChildren: false }, 'running'],
    ['a running turn asking a human', open(child), { running: true, awaitingApproval: true, waitingForChildren: true }, 'approval'],
    ['an idle parent whose children work', ended(root, 'completed'), { running: false, waitingForChildren: true }, 'waiting'],
  ];
  for (const [what, summary, live, want] of table) it(`${what}: ${want}`, () => assert.equal(sessionStatus(summary, live), want));

  it('the status bar counts what the fold says and asks for you when an approval waits', () => {
    assert.equal(statusBarView({ idle: 3, settled: 2 }).text, '$(type-hierarchy) Arbor');
    assert.equal(statusBarView({ running: 2, idle: 1 }).text, '$(sync~spin) Arbor: 2 running');
    const asking = statusBarView({ running: 1, approval: 1, waiting: 1 });
    assert.equal(asking.text, '$(shield) Arbor: 3 running · 1 needs you');
    assert.match(asking.tooltip, /1 waiting for your approval/);
  });
});
