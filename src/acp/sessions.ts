import type { Harness } from '../core/harness';

/** A session this connection knows: a root it created or loaded, or a child announced under one. */
export interface AcpSession {
  id: string;
  harness: Harness;
  /** The workspace root folder (absolute, real). */
  root: string;
  /** The root ACP session this one belongs to (itself for a root). */
  owner: string;
  /** A child's immediate parent session (absent for a root). */
  parent?: string;
  /** The prompt under way (roots only): a second one is refused; a cancel marks it. */
  prompt?: { cancelled: boolean };
  /** A child's last announced state (its JSON), so only changes are sent. */
  state?: string;
}

/**
 * The connection's sessions by id; listeners learn of additions (the feed drops its misses) and
 * removals. Roots are kept in the order they were last used (oldest first), so the idle ones
 * longest unused are the first released when the connection is past its cap (decision 0037).
 */
export class SessionTable {
  private readonly byId = new Map<string, AcpSession>();
  /** Root sessions, least recently used first. */
  private readonly lru = new Map<string, AcpSession>();
  private readonly added = new Set<(s: AcpSession) => void>();
  private readonly removed = new Set<(id: string) => void>();

  get(id: string): AcpSession | undefined {
    return this.byId.get(id);
  }

  add(s: AcpSession): AcpSession {
    const known = this.byId.get(s.id);
    if (known) return known;
    this.byId.set(s.id, s);
    if (s.parent === undefined) this.lru.set(s.id, s);
    for (const fn of this.added) fn(s);
    return s;
  }

  /** A root was used (a prompt, a mode, a load): it is the last to be released. */
  touch(id: string): void {
    const s = this.lru.get(id);
    if (!s) return;
    this.lru.delete(id);
    this.lru.set(id, s);
  }

  /** Forget a root and every session announced under it; the ids removed. */
  remove(rootId: string): string[] {
    if (!this.lru.delete(rootId)) return [];
    const gone = [...this.byId.values()].filter((s) => s.owner === rootId).map((s) => s.id);
    for (const id of gone) this.byId.delete(id);
    for (const id of gone) for (const fn of this.removed) fn(id);
    return gone;
  }

  onAdd(fn: (s: AcpSession) => void): () => void {
    this.added.add(fn);
    return () => this.added.delete(fn);
  }

  onRemove(fn: (id: string) => void): () => void {
    this.removed.add(fn);
    return () => this.removed.delete(fn);
  }

  /** Root sessions, least recently used first. */
  roots(): AcpSession[] {
    return [...this.lru.values()];
  }

  get rootCount(): number {
    return this.lru.size;
  }

  /** Whether any session of a workspace root is live here. */
  holds(root: string): boolean {
    for (const s of this.lru.values()) if (s.root === root) return true;
    return false;
  }
}
