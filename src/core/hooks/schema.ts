import type { HookSource } from '../session/events';

// Hooks in Claude Code's settings schema (issue 23, decision 0057), read from untrusted JSON:
//   {"hooks": {"PreToolUse": [{"matcher": "Bash|Write", "hooks": [{"type": "command", "command": "…", "timeout": 30}]}]}}
// A file that does not parse, an unknown event or a bad entry is reported by name and place and
// skipped; the rest of the file still counts.

/** The hook events Arbor fires, in Claude Code's names (the table the parser checks against). */
export const HOOK_EVENTS = {
  PreToolUse: 'before a tool runs; may block it (exit 2, decision "block", permissionDecision "deny"), or ask the human ("ask")',
  PostToolUse: 'after a tool answered; a block reason or additionalContext is added to what the model reads',
  UserPromptSubmit: 'before a human prompt runs; a block drops it (no turn)',
  Stop: 'when a root turn would end; a block makes it go on with the reason (at most 3 times a turn)',
  SubagentStart: 'before a subagent is created; a block vetoes it',
  SubagentStop: "when a subagent's turn would end; a block makes it go on with the reason",
  PreCompact: 'before a compaction (observe only)',
  Notification: 'when a human is asked to approve an action (observe only)',
} as const;
export type HookEventName = keyof typeof HOOK_EVENTS;

/** Default seconds a hook may run (Claude Code's), and the most a setting may ask for. */
export const DEFAULT_HOOK_TIMEOUT_S = 60;
export const MAX_HOOK_TIMEOUT_S = 600;

/** One configured command, with where it came from. */
export interface HookCommand {
  event: HookEventName;
  /** Claude Code's matcher ('' or '*' matches everything). */
  matcher: string;
  command: string;
  timeoutMs: number;
  source: HookSource;
  file: string;
}

export interface ParsedHooks {
  hooks: HookCommand[];
  /** What was skipped and why, each naming the file and the place in it. */
  problems: string[];
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The hooks of one settings file's text (a file with no `hooks` key has none). */
export function parseHooksSettings(text: string, file: string, source: HookSource): ParsedHooks {
  const out: ParsedHooks = { hooks: [], problems: [] };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    out.problems.push(`${file}: not valid JSON (${err instanceof Error ? err.message : String(err)}); its hooks are not loaded. Fix the file and reload.`);
    return out;
  }
  if (!isRecord(json) || json.hooks === undefined) return out;
  if (!isRecord(json.hooks)) {
    out.problems.push(`${file}: "hooks" must be an object of event names; its hooks are not loaded.`);
    return out;
  }
  for (const [event, groups] of Object.entries(json.hooks)) {
    const at = `${file}: hooks.${event}`;
    if (!Object.hasOwn(HOOK_EVENTS, event)) {
      out.problems.push(`${at}: Arbor does not fire "${event}" (it fires ${Object.keys(HOOK_EVENTS).join(', ')}); skipped.`);
      continue;
    }
    if (!Array.isArray(groups)) {
      out.problems.push(`${at} must be an array of {matcher, hooks}; skipped.`);
      continue;
    }
    for (const [i, g] of groups.entries()) readGroup(g, `${at}[${i}]`, event as HookEventName, file, source, out);
  }
  return out;
}

function readGroup(g: unknown, at: string, event: HookEventName, file: string, source: HookSource, out: ParsedHooks): void {
  if (!isRecord(g) || !Array.isArray(g.hooks)) {
    out.problems.push(`${at} must be {matcher?, hooks: [...]}; skipped.`);
    return;
  }
  const matcher = g.matcher === undefined ? '' : g.matcher;
  if (typeof matcher !== 'string') {
    out.problems.push(`${at}.matcher must be a string; skipped.`);
    return;
  }
  if (!matcherCompiles(matcher)) {
    out.problems.push(`${at}.matcher ${JSON.stringify(matcher)} is not a valid regular expression; skipped.`);
    return;
  }
  for (const [j, h] of (g.hooks as unknown[]).entries()) {
    const where = `${at}.hooks[${j}]`;
    if (!isRecord(h) || h.type !== 'command' || typeof h.command !== 'string' || h.command.trim() === '') {
      out.problems.push(`${where} must be {"type": "command", "command": "…"} (Arbor runs command hooks only); skipped.`);
      continue;
    }
    const t = h.timeout;
    if (t !== undefined && !(typeof t === 'number' && t > 0 && Number.isFinite(t))) {
      out.problems.push(`${where}.timeout must be a positive number of seconds; skipped.`);
      continue;
    }
    const seconds = Math.min((t as number | undefined) ?? DEFAULT_HOOK_TIMEOUT_S, MAX_HOOK_TIMEOUT_S);
    out.hooks.push({ event, matcher, command: h.command, timeoutMs: Math.round(seconds * 1000), source, file });
  }
}

function matcherCompiles(m: string): boolean {
  if (m === '*') return true; // Claude Code's "everything", not a regular expression
  try {
    new RegExp(m);
    return true;
  } catch {
    return false;
  }
}
