// The delegation tree's state. Each node lives in its own `$state.raw` cell keyed by id,
// so a `tree/node` delta replaces one entry and re-renders one row. The children lists
// and the collapsed set are `$state.raw` too and are replaced only when the shape changes
// (a node added, removed or moved, a branch toggled); the visible rows derive from them.
import type { TreeNode } from '../../../src/protocol';
import { nodeName } from '../lib/format';
import { buildChildren, ROOT, type Row, visibleRows } from '../lib/tree-rows';

class NodeCell {
  node: TreeNode;
  constructor(node: TreeNode) {
    this.node = $state.raw(node);
  }
}

export class TreeState {
  #cells = new Map<string, NodeCell>();
  children: Map<string, string[]> = $state.raw(new Map());
  collapsed: ReadonlySet<string> = $state.raw(new Set());
  readonly rows: Row[] = $derived(visibleRows(this.children, this.collapsed));
  /** Position of each visible row, for keyboard navigation. */
  readonly rowIndex: Map<string, number> = $derived(new Map(this.rows.map((r, i) => [r.id, i])));

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
      byName.set(name, [...(byName.get(name) ?? []), node]);
    }
    const out = new Map<string, number>();
    for (const same of byName.values()) {
      if (same.length < 2) continue;
      same.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
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
    return this.#cells.size;
  }

  /** Sessions, for the "Sessions" badge: a workflow run node (`wf.<runId>`) is drawn but is no session. */
  get sessions(): number {
    void this.children;
    return this.#sessions;
  }
  #sessions = 0;

  /** The node, reactively: an unknown id re-reads when the tree's shape changes. */
  get(id: string | undefined): TreeNode | undefined {
    if (id === undefined) return undefined;
    const cell = this.#cells.get(id);
    if (cell) return cell.node;
    void this.children;
    return undefined;
  }

  has(id: string): boolean {
    return this.#cells.has(id);
  }

  reset(nodes: readonly TreeNode[]): void {
    this.#cells = new Map(nodes.map((n) => [n.id, new NodeCell(n)]));
    this.#rebuild();
  }

  upsert(node: TreeNode): void {
    const cell = this.#cells.get(node.id);
    if (cell) {
      const moved = cell.node.parentId !== node.parentId || cell.node.createdAt !== node.createdAt;
      cell.node = node;
      if (moved) this.#rebuild();
      return;
    }
    this.#cells.set(node.id, new NodeCell(node));
    // New nodes are rare (a spawn, a fork); rebuilding also re-homes orphans whose parent just arrived.
    this.#rebuild();
  }

  remove(id: string): void {
    if (this.#cells.delete(id)) this.#rebuild();
  }

  #rebuild(): void {
    const nodes = [...this.#cells.values()].map((c) => c.node);
    // A node's kind never changes, so the count moves only when the shape does (here).
    this.#sessions = nodes.filter((n) => n.kind !== 'workflow').length;
    this.children = buildChildren(nodes);
  }

  parentOf(id: string): string | undefined {
    const p = this.#cells.get(id)?.node.parentId;
    return p !== undefined && this.#cells.has(p) ? p : undefined;
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
