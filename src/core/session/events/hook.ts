import type { Base } from './base';

// One hook command ran (decision 0057). Not model history.

/** How one hook run ended: it ran and let things be, blocked (exit 2 or a JSON block/deny), failed (another exit code, no start) or ran out of time. */
export type HookOutcome = 'ok' | 'blocked' | 'error' | 'timeout';
/** Where a hook was configured: the user's own settings file, the workspace's `.arbor/settings.json`, or its `.claude/settings.json`. */
export type HookSource = 'user' | 'workspace' | 'claude';

/**
 * One hook command ran (issue 23, decision 0057): which event fired it, the command as
 * configured, how it ended and the reason it gave. Shown in the transcript; not model history
 * (what a hook says to the model travels in a tool result or a `hook` message).
 */
export interface HookRunEvent extends Base<'hook/run'> {
  /** The hook event, in Claude Code's names: `PreToolUse`, `Stop`, … */
  event: string;
  command: string;
  source: HookSource;
  outcome: HookOutcome;
  /** The tool (Arbor's name) a PreToolUse / PostToolUse hook ran for. */
  tool?: string;
  exitCode?: number;
  durationMs: number;
  /** The block reason (stderr with exit 2, or the JSON `reason`), the error, or what the hook printed. */
  reason?: string;
  /** The JSON `permissionDecision` of a PreToolUse hook. */
  decision?: 'allow' | 'deny' | 'ask';
  /** Its output went past the cap and was cut. */
  truncated?: true;
}
