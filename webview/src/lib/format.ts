// Small, pure formatting helpers shared by the tree and the chat.
import type { BudgetView, GoalView, NodeStatus, TreeNode } from '../../../src/protocol';

/** A goal's hover text: objective, phase, rounds, whether it runs by itself here, why it is blocked. */
export function goalTitle(g: GoalView): string {
  return [
    `Goal: ${g.objective}`,
    `${g.phase} · ${g.roundsStarted} of ${g.maxGoalRounds} rounds started${g.phase === 'active' ? (g.armed ? ' · armed (rounds run by themselves)' : ' · not armed here: resume it to run rounds') : ''}`,
    ...(g.blocked ? [`Blocked (${g.blocked.code}): ${g.blocked.message}`] : []),
  ].join('\n');
}

/**
 * 1234567 → "1,234,567", as `toLocaleString('en-US')` writes it. Integers (every token count)
 * are grouped by hand: `toLocaleString` with a locale builds an ICU formatter per call, and the
 * first one in a fresh page loads ICU's data — together most of a 2,000-node tree's first render
 * (hover texts of its visible rows). Anything else goes through one cached formatter.
 */
export function grouped(n: number): string {
  if (!Number.isSafeInteger(n)) return (enUs ??= new Intl.NumberFormat('en-US')).format(n);
  const digits = String(n < 0 ? -n : n);
  let out = digits.length > 3 ? '' : digits;
  if (out === '') {
    const head = digits.length % 3 || 3;
    out = digits.slice(0, head);
    for (let i = head; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`;
  }
  return n < 0 || Object.is(n, -0) ? `-${out}` : out;
}
let enUs: Intl.NumberFormat | undefined;

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

/** 0.4123 → "$0.41"; under a cent, 4 decimals ("$0.0031"), so a cheap child does not read $0.00. */
export function usd(n: number): string {
  if (n === 0) return '$0.00';
  if (n < 0.01) return `$${n.toFixed(4)}`;
  return `$${n.toFixed(2)}`;
}

/** How people call a remote agent program ("claude-code" → "Claude Code"); unknown ones as given. */
const PROGRAM_NAMES: Record<string, string> = { 'claude-code': 'Claude Code', codex: 'Codex', 'gemini-cli': 'Gemini CLI', gemini: 'Gemini CLI' };
export function programName(program: string): string {
  return PROGRAM_NAMES[program] ?? program;
}

/** A remote program that reported no cost of its own: it bills its own account ("billed by Claude Code"). */
export function billedBy(node: TreeNode): string | undefined {
  return node.remote && !(node.costUsd !== undefined && node.costUsd > 0) ? `billed by ${programName(node.remote.program)}` : undefined;
}

/**
 * What a row shows as its cost: its own, or — collapsed with children below — its subtree's
 * total; dollars when every model has a price, else tokens only (never a made-up cost). No
 * figure before anything was spent (never "$0.00" for a request still under way), and a remote
 * program's own bill by its name (issue 21.6).
 */
export function costBadge(node: TreeNode, collapsed: boolean): { text: string; subtree: boolean } | undefined {
  const total = collapsed && node.subtree ? node.subtree : undefined;
  if (total && total.tokens > 0) return { text: total.costUsd !== undefined ? usd(total.costUsd) : compact(total.tokens), subtree: true };
  const billed = billedBy(node);
  if (billed) return { text: billed, subtree: false };
  const own = node.tokens.prompt + node.tokens.completion;
  if (own === 0 && !node.costUsd) return undefined;
  // Only estimates so far (the first request under way), and nothing priced: no figure, never "$0.00".
  if (node.costUsd === 0 && node.tokensEstimated) return undefined;
  return { text: node.costUsd !== undefined ? usd(node.costUsd) : `${node.tokensEstimated ? '≈' : ''}${compact(own)}`, subtree: false };
}

/** The conversation's running total in the chat header: itself and what it delegated, or nothing before any spending. */
export function totalText(node: TreeNode): string | undefined {
  const billed = billedBy(node);
  if (billed && !node.subtree) return billed;
  const total = node.subtree ?? { tokens: node.tokens.prompt + node.tokens.completion, costUsd: node.costUsd };
  if (total.tokens <= 0) return undefined;
  // Nothing priced yet (the first request under way): no "$0.00".
  if (total.costUsd === 0 && node.tokensEstimated) return undefined;
  return total.costUsd !== undefined ? usd(total.costUsd) : `${grouped(total.tokens)} tokens`;
}

/** The hover lines of a node's spending: tokens in / cached / out, its cost and what the cache saved, its subtree, its budget. */
export function costLines(node: TreeNode): string[] {
  const t = node.tokens;
  const est = node.tokensEstimated ? ' (partly estimated)' : '';
  return [
    `tokens in ${grouped(t.prompt)} / cached ${grouped(t.cacheHit)} / out ${grouped(t.completion)}${est}`,
    billedBy(node) !== undefined
      ? `cost: ${billedBy(node)} (its own account, not priced here)`
      : node.costUsd !== undefined
        ? `cost ${usd(node.costUsd)}${node.savedUsd ? ` · saved ${usd(node.savedUsd)} by cache hits` : ''}`
        : 'cost unknown: a model with no price served it (tokens only)',
    ...(node.subtree
      ? [
          `with everything below it: ${node.subtree.costUsd !== undefined ? `${usd(node.subtree.costUsd)}, ` : ''}${grouped(node.subtree.tokens)} tokens${node.subtree.savedUsd ? ` · saved ${usd(node.subtree.savedUsd)} by cache hits` : ''}`,
        ]
      : []),
    ...(node.budget ? [budgetLine(node.budget)] : []),
  ];
}

/** Share of the budget spent (the larger of its token and dollar shares), 0..1+. */
export function budgetShare(b: BudgetView): number {
  const tok = b.maxTokens !== undefined ? b.spentTokens / b.maxTokens : 0;
  // A dollar budget whose spending cannot be priced is treated as used up: its requests are refused.
  const money = b.maxCostUsd !== undefined ? (b.spentUsd === undefined ? 1 : b.spentUsd / b.maxCostUsd) : 0;
  return Math.max(tok, money);
}

/** "budget: 41,200 of 50,000 tokens · $0.31 of $0.50" */
export function budgetLine(b: BudgetView): string {
  return `budget: ${[
    ...(b.maxTokens !== undefined ? [`${grouped(b.spentTokens)} of ${grouped(b.maxTokens)} tokens`] : []),
    ...(b.maxCostUsd !== undefined ? [`${b.spentUsd !== undefined ? usd(b.spentUsd) : 'unknown (no price)'} of ${usd(b.maxCostUsd)}`] : []),
  ].join(' · ')}`;
}
