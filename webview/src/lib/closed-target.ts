// Sessions that take no messages (issue 21.6): a one-shot child ran its one task (built-in,
// forked, a workflow's agent, or a remote program's run), and a mirrored sub-session is another
// program's own, shown read-only. The composer says so before anything is typed, in people's
// words (no session id, no advice meant for the model), and offers the nearest session above
// that does take messages.
import type { TreeNode } from '../../../src/protocol';
import { nodeName } from './format';

export interface ClosedTarget {
  /** Why it takes no messages, naming it. */
  why: string;
  /** The nearest session above it that takes messages (absent: none is known). */
  parentId?: string;
  parentName?: string;
}

/** Why `node` takes no messages, or undefined when it does. */
function closedWhy(node: TreeNode, name: string): string | undefined {
  if (node.remote?.announcedBy) return `“${name}” is ${node.remote.program}'s own sub-session, shown here read-only: it takes no messages.`;
  if (node.mode === 'one-shot')
    return node.remote
      ? `“${name}” was one run of ${node.remote.program}: it takes no messages.`
      : `“${name}” is a one-shot subagent: it ran its one task and takes no messages.`;
  if (node.kind === 'workflow') return `“${name}” is a workflow run: it takes no messages.`;
  return undefined;
}

export function closedTarget(node: TreeNode | undefined, lookup: (id: string) => TreeNode | undefined): ClosedTarget | undefined {
  if (!node) return undefined;
  const why = closedWhy(node, nodeName(node, node.id));
  if (!why) return undefined;
  // A mirror's parent is the remote child that announced it, itself one-shot: go up to one that is open.
  const seen = new Set<string>([node.id]);
  for (let id = node.parentId; id !== undefined && !seen.has(id); id = lookup(id)?.parentId) {
    seen.add(id);
    const above = lookup(id);
    if (!above) break;
    if (!closedWhy(above, '')) return { why, parentId: id, parentName: nodeName(above, id) };
  }
  return { why };
}
