// Small, pure formatting helpers shared by the tree and the chat.
import type { GoalView, NodeStatus, TreeNode } from '../../../src/protocol';

/** A goal's hover text: objective, phase, rounds, whether it runs by itself here, why it is blocked. */
export function goalTitle(g: GoalView): string {
  return [
    `Goal: ${g.objective}`,
    `${g.phase} · ${g.roundsStarted} of ${g.maxGoalRounds} rounds started${g.phase === 'active' ? (g.armed ? ' · armed (rounds run by themselves)' : ' · not armed here: resume it to run rounds') : ''}`,
    ...(g.blocked ? [`Blocked (${g.blocked.code}): ${g.blocked.message}`] : []),
  ].join('\n');
}

/** 950 → "950", 12_345 → "12.3k", 2_400_000 → "2.4M". */
export function compact(n: number): string {
  if (n < 1000) return String(n);
  if (n < 10_000) return `${(n / 1000).toFixed(1)}k`;
  if (n < 1_000_000) return `${Math.round(n / 1000)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** Share of the prompt served from the provider's cache, or undefined before the first request. */
export function cachePercent(tokens: TreeNode['tokens']): number | undefined {
  if (tokens.prompt <= 0) return undefined;
  return Math.round((100 * tokens.cacheHit) / tokens.prompt);
}

/** 7_000 → "7s", 184_000 → "3m 04s", 3_900_000 → "1h 05m". */
export function elapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

/** A turn is in progress: the session can be interrupted. */
export function isActive(status: NodeStatus | undefined): boolean {
  return status === 'running' || status === 'queued' || status === 'approval' || status === 'waiting';
}

/** A status as words (the badge, labels, tooltips). */
export function statusWord(status: NodeStatus): string {
  return status === 'approval' ? 'needs approval' : status;
}

/** The last segment of a dotted child id (`s-…-ab12cd34.3f9a1c` → `3f9a1c`). */
export function shortId(id: string): string {
  const dot = id.lastIndexOf('.');
  return dot >= 0 ? id.slice(dot + 1) : id;
}

/** What to call a session in one line. */
export function nodeName(node: TreeNode | undefined, id: string): string {
  if (!node) return shortId(id);
  return node.label || node.title || (node.parentId ? `${node.origin} ${shortId(id)}` : 'Conversation');
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * A one-line preview of tool-call arguments: `path: src/a.ts, query: "x"`. Arguments are
 * model-written JSON (possibly malformed); the raw text is the fallback.
 */
export function argPreview(args: string, max = 80): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return truncate(args.replace(/\s+/g, ' ').trim(), max);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return truncate(JSON.stringify(parsed), max);
  }
  const parts: string[] = [];
  for (const [k, v] of Object.entries(parsed)) {
    const value = typeof v === 'string' ? v.replace(/\s+/g, ' ') : JSON.stringify(v);
    parts.push(`${k}: ${truncate(value ?? 'null', 48)}`);
    if (parts.join(', ').length > max) break;
  }
  return truncate(parts.join(', '), max);
}

/** Pretty JSON when the arguments parse, else the raw text. */
export function prettyArgs(args: string): string {
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args;
  }
}

export function byteSize(text: string): string {
  const n = text.length;
  if (n < 1024) return `${n} chars`;
  return `${(n / 1024).toFixed(1)} KB`;
}

export function clockTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}
