// Quick pick items for "which session?": every session in tree order (conversations newest
// first, children under their parent in creation order, as the panel draws them), indented
// by nesting, with the status and the relation to the parent in the description.
import type { NodeStatus, TreeNode } from '../../protocol';
import { nodeName } from './names';

export interface SessionPick {
  /** Indent, status icon (`$(codicon)`), name. */
  label: string;
  /** "settled · subagent of hello Arbor". */
  description: string;
  id: string;
  /** 0 for a conversation, 1 for its children, … */
  level: number;
}

/** The same icons as the panel's status badges. */
export const STATUS_ICONS: Record<NodeStatus, string> = {
  running: 'pulse',
  approval: 'shield',
  queued: 'clock',
  waiting: 'watch',
  settled: 'pass',
  failed: 'error',
  interrupted: 'debug-pause',
  idle: 'circle-outline',
};

// Figure spaces: VS Code trims ordinary leading spaces from quick pick labels.
const INDENT = '\u2007\u2007\u2007';

export function sessionPicks(nodes: readonly TreeNode[], filter: (n: TreeNode) => boolean = () => true): SessionPick[] {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const children = new Map<string, TreeNode[]>();
  const roots: TreeNode[] = [];
  for (const n of nodes) {
    const parent = n.parentId !== undefined && n.parentId !== n.id && byId.has(n.parentId) ? n.parentId : undefined;
    if (parent === undefined) roots.push(n);
    else {
      let list = children.get(parent);
      if (!list) children.set(parent, (list = []));
      list.push(n);
    }
  }
  const byCreated = (a: TreeNode, b: TreeNode) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  roots.sort((a, b) => -byCreated(a, b));
  for (const list of children.values()) list.sort(byCreated);

  const out: SessionPick[] = [];
  const seen = new Set<string>();
  // Iterative depth-first walk; `seen` guards against a corrupt (cyclic) parent chain.
  const stack: { n: TreeNode; level: number }[] = roots.map((n) => ({ n, level: 0 })).reverse();
  while (stack.length > 0) {
    const { n, level } = stack.pop()!;
    if (seen.has(n.id)) continue;
    seen.add(n.id);
    if (filter(n)) {
      const parent = n.parentId !== undefined ? byId.get(n.parentId) : undefined;
      const kind = n.kind === 'workflow' ? 'workflow run' : n.origin === 'fork' ? 'fork' : 'subagent';
      const relation = parent && level > 0 ? ` · ${kind} of ${nodeName(parent)}` : '';
      out.push({ label: `${INDENT.repeat(level)}$(${STATUS_ICONS[n.status]}) ${nodeName(n)}`, description: `${n.status}${relation}`, id: n.id, level });
    }
    const kids = children.get(n.id) ?? [];
    for (let i = kids.length - 1; i >= 0; i--) stack.push({ n: kids[i], level: level + 1 });
  }
  return out;
}

/** A stored session, not a workflow run node (`wf.<runId>`, drawn in the tree, with no log of its own). */
export function isSessionNode(n: Pick<TreeNode, 'kind'>): boolean {
  return n.kind !== 'workflow';
}

/**
 * How many sessions sit under `id` (subagents and forks, at any depth): what a delete also
 * removes. A workflow run node is walked through (its agents count) but is no session itself.
 */
export function countUnder(nodes: readonly TreeNode[], id: string): number {
  const children = new Map<string, string[]>();
  for (const n of nodes) {
    if (n.parentId === undefined || n.parentId === n.id) continue;
    let list = children.get(n.parentId);
    if (!list) children.set(n.parentId, (list = []));
    list.push(n.id);
  }
  const runs = new Set(nodes.filter((n) => !isSessionNode(n)).map((n) => n.id));
  const seen = new Set<string>([id]);
  const queue = [...(children.get(id) ?? [])];
  let count = 0;
  while (queue.length > 0) {
    const cur = queue.shift()!;
    if (seen.has(cur)) continue;
    seen.add(cur);
    if (!runs.has(cur)) count++;
    queue.push(...(children.get(cur) ?? []));
  }
  return count;
}
