// Session ids in text the panel shows (runtime notices, approval summaries, error boxes) are
// replaced by the sessions' names (issue 21.6): the user reads names, never raw ids. The model
// keeps the ids in its own history; only the rendering changes. An id the tree does not know
// stays as it is (it still means something in a log or a bug report).
import type { TreeNode } from '../../../src/protocol';
import { nodeName } from './format';

const ID = /\b(?:session )?(s-[a-z0-9]+-[a-z0-9]+(?:\.[a-z0-9]+)*)\b/g;

export function namesForIds(text: string, lookup: (id: string) => TreeNode | undefined): string {
  return text.replace(/^\[Arbor runtime\] /, '').replace(ID, (whole, id: string) => {
    const node = lookup(id);
    return node ? `“${nodeName(node, id)}”` : whole;
  });
}
