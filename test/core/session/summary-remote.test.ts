import assert from 'node:assert/strict';
import type { SessionEvent, SessionHeader } from '../../../src/core/session/events';
import { emptySummary, foldSummary, summarize } from '../../../src/core/session/summary';

// A remote child's program and version (issue 13): folded from `subagent/remote` into the one
// summary, so the tree and list_agents show them without reading the log.
describe('session summary: a remote child names its program and version', () => {
  const at = '2026-01-01T00:00:00.000Z';
  const child: SessionHeader = { id: 'r.c', createdAt: at, origin: 'subagent', parentSession: 'r', delegationDepth: 1, cwd: '/w' };
  const descriptor = { seq: 0, at, type: 'subagent/descriptor', version: 2, provider: 'codex', mode: 'one-shot', label: 'review' } satisfies SessionEvent;
  const remote = (seq: number, extra: Partial<Extract<SessionEvent, { type: 'subagent/remote' }>> = {}): SessionEvent => ({
    seq,
    at,
    type: 'subagent/remote',
    program: 'codex',
    version: 'codex-cli 0.171.0',
    externalId: 'thread-1',
    pgid: 4242,
    ...extra,
  });

  it('keeps program and version (not the external id or process group), and says the view changed', () => {
    const s = summarize(child, [descriptor]);
    assert.equal(s.remote, undefined);
    assert.equal(foldSummary(s, remote(1)), true);
    assert.deepEqual(s.remote, { program: 'codex', version: 'codex-cli 0.171.0' });
    assert.equal(s.provider, 'codex');
  });

  it('a program that gave no version has none; the last record wins', () => {
    const s = summarize(child, [descriptor, remote(1, { program: 'claude-code', version: undefined })]);
    assert.deepEqual(s.remote, { program: 'claude-code' });
    foldSummary(s, remote(2, { program: 'claude-code', version: '2.1.332 (Claude Code)' }));
    assert.deepEqual(s.remote, { program: 'claude-code', version: '2.1.332 (Claude Code)' });
  });

  it('a mirror (an ACP agent’s own sub-session, decision 0041) keeps who announced it: it is read-only', () => {
    const s = summarize(child, [descriptor, remote(1, { program: 'acp:claude', version: undefined, pgid: undefined, announcedBy: 'r.acp' })]);
    assert.deepEqual(s.remote, { program: 'acp:claude', announcedBy: 'r.acp' });
  });

  it("a fork's seed hands none on (the program ran the parent's turn, not the fork's); Arbor's own children have none", () => {
    const parent = summarize(child, [descriptor, remote(1)]);
    assert.equal(parent.remote?.program, 'codex');
    assert.equal('remote' in summarize(child, [{ ...descriptor, provider: 'spawn' }]), false);
    const fork: SessionHeader = { ...child, id: 'r.f', origin: 'fork', seedLength: 2 };
    const s = emptySummary(fork);
    for (const e of [descriptor, remote(1), { seq: 2, at, type: 'session/end-seed', seedLength: 2 } as SessionEvent]) foldSummary(s, e);
    assert.equal(s.remote, undefined);
  });
});
