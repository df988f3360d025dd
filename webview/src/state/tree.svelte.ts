// The delegation tree's state. Nodes live in a plain map; what makes a row follow its node is
// one of BUCKETS version cells, picked by a hash of the id: a `tree/node` delta bumps one cell,
// so only the readers of ids in that bucket (of the ~16 rows drawn, none or one) re-read, and
// those whose node did not change stop there (a derived of an unchanged value stays clean). A
// cell per node would track more precisely, but 10,000 cells made at every snapshot cost its
// first frame more than it spares; one made lazily inside a reaction is not tracked by it
// (Svelte does not track state created by the reaction that reads it). The children lists
// and the collapsed set are `$state.raw` and replaced only when the shape changes (a node
// added, removed or moved, a branch toggled); the visible rows derive from them.
import type { TreeNode } from '../../../src/protocol';
import { nodeName } from '../lib/format';
import { buildChildren, ROOT, type VisibleRows, visibleRows } from '../lib/tree-rows';

/** Version cells the ids are spread over: enough that a delta rarely touches a drawn row it did not change. */
const BUCKETS = 64;

class Version {
  n = $state(0);
}

/** A cheap hash of an id's last characters (ids end in random hex), into a bucket. */
function bucketOf(id: string): number {
  let h = id.length;
  for (let i = Math.max(0, id.length - 8); i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) | 0;
  return (h >>> 0) % BUCKETS;
}

export class TreeState {
  /** Replaced by a snapshot (every reader re-reads); changed in place by deltas, announced through `#versions`. */
  #nodes: Map<string, TreeNode> = $state.raw(new Map());
  readonly #versions = Array.from({ length: BUCKETS }, () => new Version());
  children: Map<string, string[]> = $state.raw(new Map());
  collapsed: ReadonlySet<string> = $state.raw(new Set());
  readonly rows: VisibleRows = $derived(visibleRows(this.children, this.collapsed));

  /**
   * Conversations that share a name are told apart (issue 21.6): the second one by creation
   * time reads "name (2)", the third "name (3)"; the first keeps its name. Only roots: a
   * child is told apart by its place under its parent.
   */
  readonly #rootNumbers: Map<string, number> = $derived.by(() => {
    const byName = new Map<string, TreeNode[]>();
    for (const id of this.children.get(ROOT) ?? []) {
      const node = this.get(id);
      if (!node) continue;
      const name = nodeName(node, id);
      const same = byName.get(name);
      if (same) same.push(node);
      else byName.set(name, [node]);
    }
    const out = new Map<string, number>();
    for (const same of byName.values()) {
      if (same.length < 2) continue;
      // Code-unit order (ISO times sort as text), as `buildChildren` orders them: `localeCompare`
      // loads ICU's collation data on first use, ~30–50 ms of a fresh panel's first frame.
      same.sort((a, b) => (a.createdAt !== b.createdAt ? (a.createdAt < b.createdAt ? -1 : 1) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      for (let i = 1; i < same.length; i++) out.set(same[i].id, i + 1);
    }
    return out;
  });

  /** What the tree calls a node: its name, with "(2)" on a conversation whose name an older one has. */
  shownName(id: string): string {
    const name = nodeName(this.get(id), id);
    const n = this.#rootNumbers.get(id);
    return n ? `${name} (${n})` : name;
  }

  constructor(collapsed: readonly string[] = []) {
    this.collapsed = new Set(collapsed);
  }

  get size(): number {
    // Reading `children` makes the count follow additions and removals.
    void this.children;
    return this.#nodes.size;
  }

  /** Sessions, for the "Sessions" badge: a workflow run node (`wf.<runId>`) is drawn but is no session. */
  get sessions(): number {
    void this.children;
    return this.#sessions;
  }
  #sessions = 0;

  /** The node, reactively: a known id re-reads when its node changes, an unknown one when the tree's shape does. */
  get(id: string | undefined): TreeNode | undefined {
    if (id === undefined) return undefined;
    void this.#versions[bucketOf(id)].n;
    const node = this.#nodes.get(id);
    if (node) return node;
    void this.children;
    return undefined;
  }

  has(id: string): boolean {
    return this.get(id) !== undefined;
  }

  reset(nodes: readonly TreeNode[]): void {
    const map = new Map<string, TreeNode>();
    for (const n of nodes) map.set(n.id, n);
    this.#nodes = map;
    this.#rebuild(nodes);
  }

  upsert(node: TreeNode): void {
    const old = this.#nodes.get(node.id);
    this.#nodes.set(node.id, node);
    this.#versions[bucketOf(node.id)].n++;
    // New nodes are rare (a spawn, a fork); rebuilding also re-homes orphans whose parent just arrived.
    if (!old || old.parentId !== node.parentId || old.createdAt !== node.createdAt) this.#rebuild();
  }

  remove(id: string): void {
    if (!this.#nodes.delete(id)) return;
    this.#versions[bucketOf(id)].n++;
    this.#rebuild();
  }

  #rebuild(nodes: readonly TreeNode[] = [...this.#nodes.values()]): void {
    // A node's kind never changes, so the count moves only when the shape does (here).
    let sessions = 0;
    for (const n of this.#nodes.values()) if (n.kind !== 'workflow') sessions++;
    this.#sessions = sessions;
    this.children = buildChildren(nodes, this.#nodes);
  }

  parentOf(id: string): string | undefined {
    const p = this.#nodes.get(id)?.parentId;
    return p !== undefined && this.#nodes.has(p) ? p : undefined;
  }

  childrenOf(id: string): readonly string[] {
    return this.children.get(id) ?? [];
  }

  roots(): readonly string[] {
    return this.children.get(ROOT) ?? [];
  }

  setExpanded(id: string, expanded: boolean): void {
    if (expanded === !this.collapsed.has(id)) return;
    const next = new Set(this.collapsed);
    if (expanded) next.delete(id);
    else next.add(id);
    this.collapsed = next;
  }

  /** Expands every ancestor so `id` has a visible row. */
  reveal(id: string): void {
    let next: Set<string> | undefined;
    const seen = new Set<string>();
    for (let p = this.parentOf(id); p !== undefined && !seen.has(p); p = this.parentOf(p)) {
      seen.add(p);
      if (this.collapsed.has(p)) (next ??= new Set(this.collapsed)).delete(p);
    }
    if (next) this.collapsed = next;
  }

  collapseAll(): void {
    const next = new Set<string>();
    for (const [key, list] of this.children) if (key !== ROOT && list.length > 0) next.add(key);
    this.collapsed = next;
  }
}
