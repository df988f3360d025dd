// The large snapshot of the webview bench (webview.tree10k.render_ms): a tree as a busy
// workspace's panel receives it, with everything a row can show — each node's own cost and
// saving, the subtree roll-up on every node with children (as presenter/cost-rollup.ts sums it),
// budgets, goals, worktrees, remote children, approvals waiting, refusals, and workflow runs as
// nodes (`wf.<runId>`, as presenter/workflow-runs.ts builds them) with their agents under them.
import type { NodeStatus, SpendView, TreeNode, WorkflowNodeView } from '../src/protocol';
import { rng } from './support';

const T0 = Date.parse('2025-06-01T09:00:00.000Z');
const STATUSES: NodeStatus[] = ['settled', 'settled', 'settled', 'idle', 'running', 'waiting', 'failed', 'interrupted'];
/** Dollars per token, roughly DeepSeek's: misses, hits, output. */
const MISS = 0.27e-6;
const HIT = 0.07e-6;
const OUT = 1.1e-6;

/**
 * `n` nodes: 1 in 200 a conversation, 1 in 250 a workflow run under a session with 40 agents
 * under it, the rest delegated children up to depth 5 (a few forks). Deterministic (seeded).
 */
export function makeRichNodes(n: number, now: number): TreeNode[] {
  const r = rng(11);
  const nodes: TreeNode[] = [];
  const sessions: TreeNode[] = [];
  const roots = Math.max(1, Math.floor(n / 200));
  const stamp = (i: number) => new Date(T0 + i * 1000).toISOString();
  const hex = (bits: number) =>
    Math.floor(r() * 2 ** bits)
      .toString(16)
      .padStart(bits / 4, '0');
  const session = (i: number, parent: TreeNode | undefined, fork: boolean, runId?: string): TreeNode => {
    const status = STATUSES[Math.floor(r() * STATUSES.length)];
    const prompt = Math.floor(r() * 80_000);
    const completion = Math.floor(prompt / 20);
    const cacheHit = Math.floor(prompt * r());
    const priced = r() < 0.998;
    const remote = !runId && parent !== undefined && !fork && r() < 0.01;
    const id = parent ? `${parent.kind === 'workflow' ? parent.parentId : parent.id}.${fork ? 'f' : ''}${hex(24)}` : `s-m3k9x2a${i.toString(36)}-${hex(32)}`;
    return {
      id,
      ...(parent ? { parentId: parent.id } : {}),
      origin: parent ? (fork ? 'fork' : 'subagent') : 'user',
      ...(parent && !fork
        ? { label: runId ? `review-part-${i}` : `worker-${i}`, mode: runId || r() < 0.5 ? 'one-shot' : 'continuable' }
        : { title: `Conversation ${i}: fix the flaky store test` }),
      provider: remote ? 'claude-code' : parent && !fork ? 'spawn' : 'deepseek',
      ...(remote ? { remote: { program: 'claude-code', version: '2.1.332 (Claude Code)' } } : {}),
      depth: parent ? parent.depth + (fork ? 0 : 1) : 0,
      status,
      ...(status === 'running' || status === 'waiting'
        ? { activity: status === 'running' ? 'tool read_file' : 'waiting for children', activeSince: now - Math.floor(r() * 600_000) }
        : {}),
      ...(status === 'failed' ? { lastStopReason: 'error' as const } : status === 'settled' ? { lastStopReason: 'completed' as const } : {}),
      tokens: { prompt, completion, cacheHit },
      ...(priced && !remote ? { costUsd: (prompt - cacheHit) * MISS + cacheHit * HIT + completion * OUT, savedUsd: cacheHit * (MISS - HIT) } : {}),
      ...(r() < 0.02 ? { refused: 1 + Math.floor(r() * 3) } : {}),
      ...(status === 'running' && r() < 0.1 ? { pendingApprovals: 1 } : {}),
      ...(!parent && r() < 0.3
        ? { goal: { objective: 'make every figure green', phase: 'active' as const, roundsStarted: 2, maxGoalRounds: 7, armed: false } }
        : {}),
      ...(parent && !runId && r() < 0.02 ? { worktree: { state: 'open' as const, branch: `arbor/${hex(24)}` } } : {}),
      reports: Math.floor(r() * 3),
      createdAt: stamp(i),
    };
  };
  const run = (i: number, parent: TreeNode): TreeNode => {
    const runId = `run-${hex(32)}`;
    const done = Math.floor(r() * 40);
    const workflow: WorkflowNodeView = {
      runId,
      name: 'review-parts',
      description: 'Review every part of the store in parallel, then summarise',
      phase: done === 40 ? 'summarise' : 'review',
      phases: ['review', ...(done === 40 ? ['summarise'] : [])],
      logs: ['reviewing 40 parts', `${done} reviews in`],
      agents: 40,
      running: 40 - done,
      ended: { done },
      status: done === 40 ? 'completed' : 'running',
    };
    return {
      id: `wf.${runId}`,
      parentId: parent.id,
      origin: 'subagent',
      title: workflow.name,
      label: workflow.name,
      depth: parent.depth + 1,
      status: workflow.status === 'running' ? 'running' : 'settled',
      ...(workflow.status === 'running' ? { activity: 'phase: review', activeSince: now - 60_000 } : {}),
      tokens: { prompt: 0, completion: 0, cacheHit: 0 },
      reports: 0,
      createdAt: stamp(i),
      kind: 'workflow',
      workflow,
    };
  };
  for (let i = 0; i < roots; i++) {
    const root = session(i, undefined, false);
    nodes.push(root);
    sessions.push(root);
  }
  while (nodes.length < n) {
    const i = nodes.length;
    if (r() < 1 / 250 && n - nodes.length > 40) {
      const wf = run(i, sessions[Math.floor(r() * sessions.length)]);
      nodes.push(wf);
      for (let k = 0; k < 40; k++) nodes.push(session(nodes.length, wf, false, wf.workflow?.runId));
      continue;
    }
    let parent: TreeNode;
    do parent = sessions[Math.floor(r() * sessions.length)];
    while (parent.depth >= 5);
    const child = session(i, parent, r() < 0.05);
    nodes.push(child);
    sessions.push(child);
  }
  addRollups(nodes);
  return nodes;
}

/**
 * Every node with children gets its subtree's spend (itself and its descendants; a fork starts
 * its own, as the host's roll-up counts only delegated children), and a few conversations a budget.
 */
function addRollups(nodes: TreeNode[]): void {
  const kids = new Map<string, TreeNode[]>();
  for (const node of nodes) {
    if (node.parentId === undefined) continue;
    let list = kids.get(node.parentId);
    if (!list) kids.set(node.parentId, (list = []));
    list.push(node);
  }
  const totals = new Map<string, SpendView>();
  // Children come after their parents: summing in reverse order sees every child's total first.
  for (let i = nodes.length - 1; i >= 0; i--) {
    const node = nodes[i];
    const total: SpendView = {
      tokens: node.tokens.prompt + node.tokens.completion,
      cacheHit: node.tokens.cacheHit,
      costUsd: node.costUsd ?? 0,
      savedUsd: node.savedUsd ?? 0,
    };
    let priced = node.kind === 'workflow' || node.costUsd !== undefined || node.remote !== undefined;
    for (const kid of kids.get(node.id) ?? []) {
      if (kid.origin === 'fork') continue;
      const t = totals.get(kid.id);
      if (!t) continue;
      total.tokens += t.tokens;
      total.cacheHit += t.cacheHit;
      total.costUsd = (total.costUsd ?? 0) + (t.costUsd ?? 0);
      total.savedUsd = (total.savedUsd ?? 0) + (t.savedUsd ?? 0);
      priced &&= t.costUsd !== undefined;
    }
    if (!priced) delete total.costUsd;
    totals.set(node.id, total);
    if (kids.has(node.id)) node.subtree = total;
    if (node.parentId === undefined && i % 3 === 0)
      node.budget = {
        maxTokens: Math.ceil(total.tokens * 1.25),
        spentTokens: total.tokens,
        ...(total.costUsd !== undefined ? { maxCostUsd: 5, spentUsd: total.costUsd } : {}),
      };
  }
}
