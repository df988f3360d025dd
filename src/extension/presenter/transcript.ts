import type { HookRunEvent, SessionEvent, WorktreeEvent } from '../../core/session/events';
import type { TranscriptEntry } from '../../protocol';
import { shownSource } from './message-source';

/** What the chat shows of one event; runtime-only events (inbox, request headers, policy) show nothing. */
export function toEntry(e: SessionEvent): TranscriptEntry | undefined {
  switch (e.type) {
    case 'user/message':
      return {
        kind: 'user',
        seq: e.seq,
        at: e.at,
        text: e.text,
        ...shownSource(e.source),
        ...(e.surfaceOp === 'replace' ? { compacted: true } : {}),
      };
    case 'assistant/message':
      return {
        kind: 'assistant',
        seq: e.seq,
        at: e.at,
        text: e.text,
        ...(e.reasoning ? { reasoning: e.reasoning } : {}),
        ...(e.toolCalls?.length ? { toolCalls: e.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })) } : {}),
        ...(e.usage
          ? {
              usage: {
                promptTokens: e.usage.promptTokens,
                completionTokens: e.usage.completionTokens,
                ...(e.usage.cacheHitTokens !== undefined ? { cacheHitTokens: e.usage.cacheHitTokens } : {}),
              },
            }
          : {}),
      };
    case 'tool/result':
      return { kind: 'tool', seq: e.seq, at: e.at, callId: e.callId, name: e.name, content: e.content, isError: e.isError };
    case 'turn/start':
      return { kind: 'turn', seq: e.seq, at: e.at, phase: 'start' };
    case 'turn/end':
      return {
        kind: 'turn',
        seq: e.seq,
        at: e.at,
        phase: 'end',
        stopReason: e.stopReason,
        ...(e.error ? { error: e.error } : {}),
        ...(e.errorCode ? { errorCode: e.errorCode } : {}),
      };
    case 'session/end-seed':
      return { kind: 'marker', seq: e.seq, at: e.at, text: `Forked here: ${e.seedLength} events above came from the parent.` };
    case 'compaction/end':
      return e.outcome === 'committed'
        ? { kind: 'marker', seq: e.seq, at: e.at, text: 'Earlier conversation compacted into a summary (the raw log keeps everything).' }
        : undefined;
    case 'approval/grant': {
      const what = `${e.tool} on ${e.scope.kind === 'command-prefix' ? `"${e.scope.value} …"` : e.scope.value}`;
      return { kind: 'marker', seq: e.seq, at: e.at, text: e.revoked ? `Revoked: ${what} asks again.` : `Allowed for this conversation: ${what}.` };
    }
    case 'hook/run':
      return { kind: 'hook', seq: e.seq, at: e.at, text: hookLine(e), outcome: e.outcome };
    case 'worktree':
      return e.state === 'inherited' ? undefined : { kind: 'marker', seq: e.seq, at: e.at, text: worktreeLine(e) };
    default:
      return undefined;
  }
}

const WORKTREE_LINES: Record<Exclude<WorktreeEvent['state'], 'inherited'>, (e: WorktreeEvent) => string> = {
  open: (e) => `Working in its own git worktree on branch ${e.branch}: the workspace is read-only to it.`,
  applied: (e) => `Its changes were applied to the workspace (${e.files ?? 0} file${e.files === 1 ? '' : 's'}); worktree and branch ${e.branch} removed.`,
  discarded: (e) => `Its worktree was discarded (branch ${e.branch} deleted).`,
  kept: (e) => `Its worktree folder was removed; its work is kept on branch ${e.branch}.`,
};

/** A worktree state change as a transcript line. */
export function worktreeLine(e: WorktreeEvent): string {
  return e.state === 'inherited' ? `Works in the worktree of its parent (branch ${e.branch}).` : WORKTREE_LINES[e.state](e);
}

const HOOK_VERBS: Record<HookRunEvent['outcome'], string> = { ok: 'ran', blocked: 'blocked', error: 'failed', timeout: 'timed out' };

/** One hook run as a compact line: "hook PreToolUse blocked run_command: rm -rf is not allowed". */
export function hookLine(e: HookRunEvent): string {
  const head = `hook ${e.event} ${HOOK_VERBS[e.outcome]}${e.tool ? ` ${e.tool}` : ''}`;
  const said = e.reason ? `: ${e.reason.length > 300 ? `${e.reason.slice(0, 299)}…` : e.reason}` : ` (${e.durationMs} ms)`;
  return `${head}${e.decision && e.outcome === 'ok' ? ` (${e.decision})` : ''}${said}`;
}

/** The newest `limit` entries before `beforeSeq` (paging backwards through a long transcript). */
export function page(events: readonly SessionEvent[], beforeSeq: number, limit: number): { entries: TranscriptEntry[]; hasMore: boolean } {
  const out: TranscriptEntry[] = [];
  let i = Math.min(beforeSeq, events.length) - 1;
  for (; i >= 0 && out.length < limit; i--) {
    const x = toEntry(events[i]);
    if (x) out.push(x);
  }
  let hasMore = false;
  for (; i >= 0; i--) {
    if (toEntry(events[i])) {
      hasMore = true;
      break;
    }
  }
  return { entries: out.reverse(), hasMore };
}
