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

/** The connection's sessions by id; listeners learn of additions (the feed drops its misses). */
export class SessionTable {
  private readonly byId = new Map<string, AcpSession>();
  private readonly added = new Set<(s: AcpSession) => void>();

  get(id: string): AcpSession | undefined {
    return this.byId.get(id);
  }

  add(s: AcpSession): AcpSession {
    const known = this.byId.get(s.id);
    if (known) return known;
    this.byId.set(s.id, s);
    for (const fn of this.added) fn(s);
    return s;
  }

  onAdd(fn: (s: AcpSession) => void): void {
    this.added.add(fn);
  }

  roots(): AcpSession[] {
    return [...this.byId.values()].filter((s) => s.parent === undefined);
  }
}
