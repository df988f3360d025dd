// What to call a session in one line, for people: its subagent label, else its title, else
// a short fallback. Ids are for machines (tooltips, logs, the raw event log).
import type { SessionEvent, SessionHeader } from './events';
import { descriptorOf } from './folds';

/** The last segment of a dotted child id (`s-…-ab12cd34.3f9a1c` → `3f9a1c`). */
export function shortId(id: string): string {
  const dot = id.lastIndexOf('.');
  return dot >= 0 ? id.slice(dot + 1) : id;
}

/** What is known about a session when naming it; the same rule the webview's `nodeName` applies. */
export interface NameParts {
  id: string;
  /** The subagent's label (from its own descriptor). */
  label?: string;
  title?: string;
  origin: SessionHeader['origin'];
  parentId?: string;
}

/** label ?? title ?? "subagent 3f9a1c" / "fork f1a2b3" / "Conversation". */
export function sessionName(s: NameParts): string {
  return s.label || s.title || (s.parentId ? `${s.origin} ${shortId(s.id)}` : 'Conversation');
}

/** The name of a session read from its log (the descriptor's label is in its own suffix). */
export function nameFromLog(header: SessionHeader, events: readonly SessionEvent[]): string {
  const label = descriptorOf(header, events)?.label;
  return sessionName({
    id: header.id,
    origin: header.origin,
    ...(label ? { label } : {}),
    ...(header.title ? { title: header.title } : {}),
    ...(header.parentSession ? { parentId: header.parentSession } : {}),
  });
}

/** `base`, or `base (n)` with the smallest n ≥ 2 that no name in `taken` has yet. */
export function distinctName(base: string, taken: Iterable<string | undefined>): string {
  const used = new Set<string>();
  for (const t of taken) if (t) used.add(t);
  if (!used.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base} (${n})`;
    if (!used.has(candidate)) return candidate;
  }
}

/**
 * What a fork is called (issue 21.6): "Fork of X"; a fork of a fork does not stack ("Fork of
 * Fork of X" → "Fork 2 of X", then "Fork 3 of X"): the number counts the generations.
 */
export function forkName(sourceName: string): string {
  const m = /^Fork (?:(\d+) )?of (.+)$/s.exec(sourceName);
  if (!m) return `Fork of ${sourceName}`;
  return `Fork ${(m[1] ? Number(m[1]) : 1) + 1} of ${m[2]}`;
}
