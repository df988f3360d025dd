/**
 * Flat scopes (DESIGN §5): a registration is global or belongs to exactly one scope key.
 * A view stacks global → preset (standing) scope → own scope; nearer shadows farther by
 * name. Filters restrict only inherited entries (several intersect); own entries are never
 * removed by a filter. Output is sorted by name so equal views give equal request bytes.
 */
export const GLOBAL = 'global';

export interface ViewSpec {
  /** The preset's standing scope key (a child joins its parent's preset scope, not the parent's own). */
  preset?: string;
  /** This agent's own scope key. */
  own?: string;
  /** Name allow-lists for inherited entries; several intersect. */
  filters?: readonly (readonly string[])[];
}

export class ScopeRegistry<T extends { name: string }> {
  private readonly byScope = new Map<string, Map<string, T>>();

  /** Register `item` in `scope`; returns an unregister function. Re-registering a name replaces it. */
  register(item: T, scope: string = GLOBAL): () => void {
    let m = this.byScope.get(scope);
    if (!m) this.byScope.set(scope, (m = new Map()));
    m.set(item.name, item);
    return () => {
      const cur = this.byScope.get(scope);
      if (cur?.get(item.name) === item) cur.delete(item.name);
      if (cur?.size === 0) this.byScope.delete(scope);
    };
  }

  /** Drop a whole scope (an agent disposed). */
  dropScope(scope: string): void {
    if (scope !== GLOBAL) this.byScope.delete(scope);
  }

  view(spec: ViewSpec = {}): T[] {
    const merged = new Map<string, T>();
    for (const key of [GLOBAL, spec.preset]) {
      if (!key) continue;
      for (const [name, item] of this.byScope.get(key) ?? []) merged.set(name, item);
    }
    for (const f of spec.filters ?? []) {
      const allow = new Set(f);
      for (const name of [...merged.keys()]) if (!allow.has(name)) merged.delete(name);
    }
    if (spec.own) for (const [name, item] of this.byScope.get(spec.own) ?? []) merged.set(name, item);
    return [...merged.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}
