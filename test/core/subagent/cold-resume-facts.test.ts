import * as assert from 'node:assert/strict';
import type { SessionEvent, SessionHeader } from '../../../src/core/session/events';
import { descriptorOf, worktreeOf } from '../../../src/core/session/folds';
import { resumeFacts } from '../../../src/core/subagent/cold-resume';

// A cold resume reads its child's descriptor, worktree and approval switch in one pass
// (decision 0128): the same answers as the folds it replaced, a fork's seed included.

const at = '2026-01-01T00:00:00.000Z';
const ev = (type: string, extra: Record<string, unknown> = {}) => ({ type, at, ...extra }) as unknown as SessionEvent;
const log = (...events: SessionEvent[]): SessionEvent[] => events.map((e, seq) => ({ ...e, seq }) as SessionEvent);
const descriptor = (label: string) => ev('subagent/descriptor', { version: 2, mode: 'continuable', provider: 'spawn', label });
const worktree = (root: string) => ev('worktree', { state: 'open', repo: '/r', path: root, root, branch: 'b', base: 'c' });
const approval = (policy: string) => ev('approval/policy', { policy, source: 'user' });
const message = (text: string) => ev('user/message', { text, source: { kind: 'user' } });

/** What cold-resume read before: three folds and a reduce. */
const before = (header: SessionHeader, events: readonly SessionEvent[]) => ({
  descriptor: descriptorOf(header, events),
  worktree: worktreeOf(header, events),
  approval: events.reduce<string | undefined>((v, e) => (e.type === 'approval/policy' ? e.policy : v), undefined),
});

describe('resumeFacts: a resumed child’s facts in one pass', () => {
  const spawned: SessionHeader = { id: 's-p.c1', createdAt: at, origin: 'subagent', parentSession: 's-p' };
  const cases: [string, SessionHeader, SessionEvent[]][] = [
    ['a spawned child: its descriptor first, no worktree, no switch', spawned, log(descriptor('own'), message('task'), message('more'))],
    [
      'later facts win: the last descriptor, worktree and switch',
      spawned,
      log(descriptor('first'), worktree('/w1'), approval('ask'), message('x'), worktree('/w2'), descriptor('second'), approval('never')),
    ],
    [
      'a fork: its seed’s descriptor and worktree are its source’s, its seed’s switch still counts',
      { id: 's-p.f1', createdAt: at, origin: 'fork', parentSession: 's-p', seedLength: 4 },
      log(descriptor('ancestor'), worktree('/ancestor'), approval('ask'), message('seeded'), ev('session/end-seed', { seedLength: 4 }), message('own')),
    ],
    [
      'a fork with its own descriptor and worktree after the seed',
      { id: 's-p.f2', createdAt: at, origin: 'fork', parentSession: 's-p', seedLength: 2 },
      log(descriptor('ancestor'), approval('never'), ev('session/end-seed', { seedLength: 2 }), descriptor('own'), worktree('/own'), message('go')),
    ],
  ];
  for (const [name, header, events] of cases) {
    it(name, () => {
      const was = before(header, events);
      const now = resumeFacts(header, events);
      assert.equal(now.descriptor, was.descriptor);
      assert.equal(now.worktree, was.worktree);
      assert.equal(now.approval, was.approval);
    });
  }

  it('reads what the cases say they read', () => {
    const [, [, h2, e2], [, h3, e3]] = cases;
    const later = resumeFacts(h2, e2);
    assert.equal((later.descriptor as { label?: string }).label, 'second');
    assert.equal(later.worktree?.root, '/w2');
    assert.equal(later.approval, 'never');
    const fork = resumeFacts(h3, e3);
    assert.equal(fork.descriptor, undefined);
    assert.equal(fork.worktree, undefined);
    assert.equal(fork.approval, 'ask');
  });
});
