import type { HookOutcome } from '../session/events';
import type { HookRun } from './runner';

// What one hook run says, read the way Claude Code reads it: exit 0 lets things be (its stdout
// parsed as JSON when it is an object), exit 2 blocks with stderr as the reason, any other exit
// (or a timeout) is a non-blocking error shown in the transcript. JSON `decision: "block"` with
// `reason` blocks; a PreToolUse hook's `hookSpecificOutput.permissionDecision` is allow, deny or
// ask (the legacy `decision: "approve"` is allow). What it may do with them is the caller's.

export type PermissionDecision = 'allow' | 'deny' | 'ask';

export interface HookVerdict {
  outcome: HookOutcome;
  /** The reason, when the hook blocked (exit 2, `decision: "block"`, or `permissionDecision: "deny"`). */
  block?: string;
  decision?: PermissionDecision;
  /** `permissionDecisionReason` of an allow or ask. */
  decisionReason?: string;
  /** `hookSpecificOutput.additionalContext`, for the model. */
  context?: string;
  /** What the transcript shows: the block reason, the error, or nothing. */
  note?: string;
  exitCode?: number;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

export function readVerdict(run: HookRun): HookVerdict {
  const code = run.exitCode !== undefined ? { exitCode: run.exitCode } : {};
  if (run.outcome === 'timeout' || (run.outcome === 'error' && run.error)) return { outcome: run.outcome, note: run.error, ...code };
  if (run.exitCode === 2) {
    const why = text(run.stderr) ?? 'the hook exited with code 2 without saying why';
    return { outcome: 'blocked', block: why, note: why, ...code };
  }
  if (run.exitCode !== 0) {
    const err = text(run.stderr) ?? text(run.stdout);
    return { outcome: 'error', note: `it exited with code ${run.exitCode}${err ? `: ${err}` : ''}`, ...code };
  }
  return { ...fromJson(run.stdout), ...code };
}

/** Exit 0: the JSON on stdout, if it is an object; plain text changes nothing. */
function fromJson(stdout: string): HookVerdict {
  const trimmed = stdout.trim();
  if (!trimmed.startsWith('{')) return { outcome: 'ok' };
  let j: unknown;
  try {
    j = JSON.parse(trimmed);
  } catch {
    return { outcome: 'ok' };
  }
  if (!isRecord(j)) return { outcome: 'ok' };
  const specific = isRecord(j.hookSpecificOutput) ? j.hookSpecificOutput : {};
  const context = text(specific.additionalContext);
  const withContext = context ? { context } : {};
  const pd = specific.permissionDecision;
  const decision: PermissionDecision | undefined = pd === 'allow' || pd === 'deny' || pd === 'ask' ? pd : j.decision === 'approve' ? 'allow' : undefined;
  const decisionReason = text(specific.permissionDecisionReason) ?? text(j.reason);
  if (decision === 'deny' || j.decision === 'block') {
    const why = decisionReason ?? text(j.stopReason) ?? 'a hook blocked it without saying why';
    return { outcome: 'blocked', block: why, note: why, ...(decision ? { decision } : {}), ...withContext };
  }
  return {
    outcome: 'ok',
    ...(decision ? { decision } : {}),
    ...(decision && decisionReason ? { decisionReason, note: decisionReason } : {}),
    ...withContext,
  };
}
