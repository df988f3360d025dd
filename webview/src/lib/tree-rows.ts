// The delegation tree as data: children lists and the visible rows. Pure, so the shape can be
// tested without a DOM. Sized for 10,000 nodes (webview.tree10k.render_ms): one sort of all
// nodes, no per-comparison lookups, and the visible rows held as a few arrays of small
// integers rather than one object per row — the panel draws ~16 of them, so `Row` objects are
// made only for those (`slice`, `at`). Ten thousand short-lived objects are what a snapshot's
// frame paid for in garbage collection.

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

/** Creation order: `createdAt`, then id (ids are unique, so no two nodes tie). */
function byCreation(a: Placed, b: Placed): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * Children lists keyed by parent id (`ROOT` for conversations). A node whose parent is
 * unknown (not yet sent, or removed) is shown as a root rather than lost. Roots are
 * newest first (the conversation you are in is at the top); children keep spawn order.
 * `byId` (every node by id, as the caller already holds them) spares building one; with
 * it, a node it does not hold under its id (a duplicate) is left out.
 */
export function buildChildren(nodes: Iterable<Placed>, byId?: ReadonlyMap<string, Placed>): Map<string, string[]> {
  let all = Array.isArray(nodes) ? (nodes as readonly Placed[]) : [...nodes];
  let known = byId;
  if (!known) {
    const map = new Map<string, Placed>();
    for (const n of all) map.set(n.id, n);
    known = map;
  }
  // Nodes usually arrive in creation order already: then nothing is copied or sorted.
  let sorted = true;
  for (let i = 1; i < all.length && sorted; i++) sorted = byCreation(all[i - 1], all[i]) < 0;
  if (!sorted) all = [...all].sort(byCreation);
  const children = new Map<string, string[]>();
  for (const n of all) {
    if (known.get(n.id) !== n) continue;
    const key = n.parentId !== undefined && n.parentId !== n.id && known.has(n.parentId) ? n.parentId : ROOT;
    const list = children.get(key);
    if (list) list.push(n.id);
    else children.set(key, [n.id]);
  }
  children.get(ROOT)?.reverse();
  return children;
}

/** The rows of every node whose ancestors are all expanded, depth-first; `Row` objects on demand. */
export class VisibleRows {
  readonly length: number;
  readonly #ids: readonly string[];
  /** Per row: level, position among siblings, sibling count, parent's row (-1 for a root), flags. */
  readonly #level: Int32Array;
  readonly #pos: Int32Array;
  readonly #size: Int32Array;
  readonly #parent: Int32Array;
  readonly #flags: Uint8Array;

  constructor(ids: string[], level: Int32Array, pos: Int32Array, size: Int32Array, parent: Int32Array, flags: Uint8Array) {
    this.#ids = ids;
    this.#level = level;
    this.#pos = pos;
    this.#size = size;
    this.#parent = parent;
    this.#flags = flags;
    this.length = ids.length;
  }

  /** The row at index `i` (0-based), or undefined out of range. */
  at(i: number): Row | undefined {
    if (!(i >= 0 && i < this.length)) return undefined;
    const p = this.#parent[i];
    const f = this.#flags[i];
    return {
      id: this.#ids[i],
      level: this.#level[i],
      pos: this.#pos[i],
      size: this.#size[i],
      hasChildren: (f & HAS_CHILDREN) !== 0,
      expanded: (f & EXPANDED) !== 0,
      parentId: p < 0 ? undefined : this.#ids[p],
    };
  }

  /** Rows `start` (inclusive) to `end` (exclusive), like `Array.prototype.slice` with non-negative bounds. */
  slice(start = 0, end = this.length): Row[] {
    const out: Row[] = [];
    for (let i = Math.max(0, start); i < Math.min(end, this.length); i++) out.push(this.at(i) as Row);
    return out;
  }

  /** The row index of `id`, or -1 when it has no visible row. A scan: it runs per key press, not per frame. */
  indexOf(id: string): number {
    return this.#ids.indexOf(id);
  }
}

const HAS_CHILDREN = 1;
const EXPANDED = 2;

/**
 * Depth-first rows of every node whose ancestors are all expanded. Iterative, so a hostile or
 * corrupt tree cannot overflow the stack; a node that is its own ancestor (a cycle in a corrupt
 * map) is not entered again. `buildChildren` puts each id in one list only. The per-row numbers
 * go into typed arrays sized once (their memory is outside the garbage-collected heap).
 */
export function visibleRows(children: ReadonlyMap<string, readonly string[]>, collapsed: ReadonlySet<string>): VisibleRows {
  let capacity = 0;
  for (const list of children.values()) capacity += list.length;
  const ids: string[] = [];
  const level = new Int32Array(capacity);
  const pos = new Int32Array(capacity);
  const size = new Int32Array(capacity);
  const parent = new Int32Array(capacity);
  const flags = new Uint8Array(capacity);
  // One frame per open level: its list, the next index in it, and the row of its parent.
  const lists: (readonly string[])[] = [];
  const next: number[] = [];
  const parentRow: number[] = [];
  const roots = children.get(ROOT);
  if (roots) {
    lists.push(roots);
    next.push(0);
    parentRow.push(-1);
  }
  while (lists.length > 0) {
    const top = lists.length - 1;
    const list = lists[top];
    const i = next[top];
    if (i >= list.length) {
      lists.pop();
      next.pop();
      parentRow.pop();
      continue;
    }
    next[top] = i + 1;
    const id = list[i];
    if (onPath(id, ids, parentRow)) continue;
    const kids = children.get(id);
    const hasChildren = kids !== undefined && kids.length > 0;
    const expanded = hasChildren && !collapsed.has(id);
    const row = ids.length;
    ids.push(id);
    level[row] = top + 1;
    pos[row] = i + 1;
    size[row] = list.length;
    parent[row] = parentRow[top];
    flags[row] = (hasChildren ? HAS_CHILDREN : 0) | (expanded ? EXPANDED : 0);
    if (expanded) {
      lists.push(kids);
      next.push(0);
      parentRow.push(row);
    }
  }
  return new VisibleRows(ids, level, pos, size, parent, flags);
}

/** `id` is the parent of an open level: it would be its own descendant. */
function onPath(id: string, ids: readonly string[], parentRow: readonly number[]): boolean {
  for (let k = 1; k < parentRow.length; k++) if (ids[parentRow[k]] === id) return true;
  return false;
}
