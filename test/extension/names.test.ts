import assert from 'node:assert/strict';
import type { SessionEvent, SessionHeader } from '../../src/core/session/events';
import { distinctName, nameFromLog, sessionName, shortId } from '../../src/core/session/names';
import { exportFileName, nodeName } from '../../src/extension/presenter/names';
import { countUnder, isSessionNode, sessionPicks } from '../../src/extension/presenter/session-picks';
import type { TreeNode } from '../../src/protocol';
import { nodeName as webviewNodeName } from '../../webview/src/lib/format';

const T = (minute: number) => `2025-06-01T09:${String(minute).padStart(2, '0')}:00.000Z`;
function node(id: string, extra: Partial<TreeNode> = {}): TreeNode {
  return { id, origin: 'user', depth: 0, status: 'idle', tokens: { prompt: 0, completion: 0, cacheHit: 0 }, reports: 0, createdAt: T(0), ...extra };
}

describe('names: what a session is called in the host UI', () => {
  const cases: [TreeNode, string][] = [
    [node('s-1.aaaaaa', { parentId: 's-1', origin: 'subagent', label: 'surveyor', title: 'ignored title' }), 'surveyor'],
    [node('s-1', { title: 'hello Arbor' }), 'hello Arbor'],
    [node('s-1.fbbbbbb', { parentId: 's-1', origin: 'fork', title: 'Fork of surveyor (2)' }), 'Fork of surveyor (2)'],
    [node('s-1.cccccc', { parentId: 's-1', origin: 'subagent' }), 'subagent cccccc'],
    [node('s-1.fdddddd', { parentId: 's-1', origin: 'fork' }), 'fork fdddddd'],
    [node('s-lx2-12345678'), 'Conversation'],
    [node('s-1.eeeeee', { parentId: 's-1', origin: 'subagent', label: '' }), 'subagent eeeeee'],
  ];

  it('label, else title, else a short fallback — the same as the webview shows', () => {
    for (const [n, want] of cases) {
      assert.equal(nodeName(n), want, n.id);
      assert.equal(webviewNodeName(n, n.id), want, `the webview's nodeName for ${n.id}`);
    }
    assert.equal(shortId('s-1.aaaaaa.bbbbbb'), 'bbbbbb');
    assert.equal(shortId('s-lx2-12345678'), 's-lx2-12345678');
  });

  it("reads the label from the session's own descriptor, not from a fork seed", () => {
    const child: SessionHeader = { id: 's-1.aaaaaa', createdAt: T(1), origin: 'subagent', parentSession: 's-1', delegationDepth: 1 };
    const descriptor = {
      seq: 0,
      at: T(1),
      type: 'subagent/descriptor',
      version: 2,
      mode: 'continuable',
      provider: 'spawn',
      label: 'surveyor',
    } as unknown as SessionEvent;
    assert.equal(nameFromLog(child, [descriptor]), 'surveyor');
    const fork: SessionHeader = { id: 's-1.fzzzzzz', createdAt: T(2), origin: 'fork', parentSession: 's-1.aaaaaa', seedLength: 1, title: 'Fork of surveyor' };
    assert.equal(nameFromLog(fork, [descriptor]), 'Fork of surveyor');
    assert.equal(nameFromLog({ ...fork, title: undefined }, [descriptor]), 'fork fzzzzzz');
  });

  it('distinct names count up from (2), skipping names already taken', () => {
    assert.equal(distinctName('Fork of surveyor', []), 'Fork of surveyor');
    assert.equal(distinctName('Fork of surveyor', ['Fork of surveyor', undefined]), 'Fork of surveyor (2)');
    assert.equal(distinctName('Fork of surveyor', ['Fork of surveyor', 'Fork of surveyor (2)', 'Fork of surveyor (4)']), 'Fork of surveyor (3)');
    assert.equal(distinctName('x', ['Fork of surveyor']), 'x');
  });

  it('export file names are the name, lower case, dashed, never empty', () => {
    assert.equal(exportFileName('Fork of surveyor (2)'), 'fork-of-surveyor-2.jsonl');
    assert.equal(exportFileName('surveyor'), 'surveyor.jsonl');
    assert.equal(exportFileName('Ünïcode / path\\..\\evil'), 'unicode-path-evil.jsonl');
    assert.equal(exportFileName('???'), 'session.jsonl');
    assert.equal(exportFileName('a'.repeat(100)).length, 60 + '.jsonl'.length);
    assert.equal(sessionName({ id: 's-1', origin: 'user' }), 'Conversation');
  });
});

describe('session quick picks: names in tree order, indented, with status and relation', () => {
  const nodes = [
    node('s-old', { title: 'older chat', createdAt: T(0), status: 'idle' }),
    node('s-new', { title: 'hello Arbor', createdAt: T(5), status: 'waiting' }),
    node('s-new.b', { parentId: 's-new', origin: 'subagent', label: 'long-task', createdAt: T(7), status: 'interrupted', depth: 1 }),
    node('s-new.a', { parentId: 's-new', origin: 'subagent', label: 'surveyor', createdAt: T(6), status: 'settled', depth: 1 }),
    node('s-new.a.g', { parentId: 's-new.a', origin: 'subagent', label: 'grand', createdAt: T(8), status: 'running', depth: 2 }),
    node('s-new.fx', { parentId: 's-new.a', origin: 'fork', title: 'Fork of surveyor', createdAt: T(9), depth: 1 }),
    node('s-orphan.z', { parentId: 's-gone', origin: 'subagent', label: 'orphan', createdAt: T(1), status: 'failed' }),
  ];

  it('conversations newest first, children in creation order under their parent', () => {
    const picks = sessionPicks(nodes);
    assert.deepEqual(
      picks.map((p) => [p.id, p.level]),
      [
        ['s-new', 0],
        ['s-new.a', 1],
        ['s-new.a.g', 2],
        ['s-new.fx', 2],
        ['s-new.b', 1],
        ['s-orphan.z', 0],
        ['s-old', 0],
      ],
    );
    const by = new Map(picks.map((p) => [p.id, p]));
    assert.equal(by.get('s-new')!.label, '$(watch) hello Arbor');
    assert.equal(by.get('s-new')!.description, 'waiting');
    assert.equal(by.get('s-new.a')!.label, '\u2007\u2007\u2007$(pass) surveyor');
    assert.equal(by.get('s-new.a')!.description, 'settled · subagent of hello Arbor');
    assert.equal(by.get('s-new.a.g')!.label, `${'\u2007'.repeat(6)}$(pulse) grand`);
    assert.equal(by.get('s-new.fx')!.description, 'idle · fork of surveyor');
    assert.equal(by.get('s-new.b')!.label.endsWith('$(debug-pause) long-task'), true);
    // A node whose parent is gone is shown as a root, without a relation.
    assert.equal(by.get('s-orphan.z')!.description, 'failed');
    for (const p of picks) assert.ok(!p.label.includes(p.id) && !p.description.includes(p.id), `no id in the pick for ${p.id}`);
  });

  it('a filter keeps tree order and nesting of what it keeps; a cycle does not loop', () => {
    assert.deepEqual(
      sessionPicks(nodes, (n) => n.status === 'running').map((p) => [p.id, p.level]),
      [['s-new.a.g', 2]],
    );
    const cyclic = [node('a', { parentId: 'b', createdAt: T(1) }), node('b', { parentId: 'a', createdAt: T(2) })];
    assert.deepEqual(
      sessionPicks(cyclic).map((p) => p.id),
      [],
    );
  });

  it('counts what a delete also removes: subagents and forks at any depth', () => {
    assert.equal(countUnder(nodes, 's-new'), 4);
    assert.equal(countUnder(nodes, 's-new.a'), 2);
    assert.equal(countUnder(nodes, 's-old'), 0);
  });

  // Issue 21.7: a workflow run node (wf.<runId>) is drawn in the tree but is no session.
  it('never offers a workflow run node, and counts its agents but not the run', () => {
    const run = node('wf.r1', { kind: 'workflow', parentId: 's-old', createdAt: T(3), status: 'running' });
    const agent = node('s-old.w1', { parentId: 'wf.r1', origin: 'subagent', createdAt: T(4) });
    const withRun = [...nodes, run, agent];
    const offered = sessionPicks(withRun, isSessionNode).map((p) => [p.id, p.level]);
    assert.ok(!offered.some(([id]) => id === 'wf.r1'));
    assert.deepEqual(offered.slice(-2), [
      ['s-old', 0],
      ['s-old.w1', 2],
    ]);
    assert.equal(countUnder(withRun, 's-old'), 1);
    assert.equal(isSessionNode(node('s-1')), true);
  });
});
