import type { SessionEvent } from './events';

// Refused actions, folded from `tool/result` events that carry a `refusal` mark (decision
// 0015). Hosts and the settlement notice use this so a child that was refused what it
// tried does not read as a plain success.

export interface RefusedAction {
  seq: number;
  tool: string;
  /** What was asked, without the tool's own prefix: the command line, or the file action. */
  what: string;
  outcome: string;
}

/** Refused actions among `events` with `seq >= fromSeq` (a fork's seed and earlier activations are not counted). */
export function refusedActions(events: readonly SessionEvent[], fromSeq = 0): RefusedAction[] {
  const out: RefusedAction[] = [];
  for (const e of events) {
    if (e.seq < fromSeq || e.type !== 'tool/result' || !e.refusal) continue;
    out.push({ seq: e.seq, tool: e.name, what: stripPrefix(e.name, e.refusal.summary), outcome: e.refusal.outcome });
  }
  return out;
}

function stripPrefix(tool: string, summary: string): string {
  if (summary.startsWith('$ ')) return summary.slice(2).trim();
  if (summary.startsWith(`${tool}: `)) return summary.slice(tool.length + 2).trim();
  return summary.trim();
}

const WHY: Record<string, string> = {
  'policy-never': 'approval: never',
  denied: 'denied by the user',
  'no-port': 'no one to approve it',
  aborted: 'cancelled while waiting for approval',
  'port-failed': 'the approval service failed',
  'no-allow-once': 'allowed, but the agent offered no allow-once answer',
  'too-many-questions': 'refused unasked: the agent asked more at once than Arbor puts to a human',
  'read-only': 'refused unasked: a read-only child writes nothing',
  ceiling: 'refused unasked: it would run outside the sandbox the ceiling (--sandbox, Restricted Mode) allows',
  'mode-fixed': "refused unasked: the agent's mode is the one Arbor set for the child's sandbox",
};

/** "run_command `npm test` (approval: never)". */
export function describeRefused(a: RefusedAction): string {
  return `${a.tool} \`${a.what}\` (${WHY[a.outcome] ?? a.outcome})`;
}

/**
 * One sentence for a settlement notice, or '' when nothing was refused:
 * "Finished, but 1 action was refused: run_command `npm test` (approval: never)."
 */
export function refusalSentence(list: readonly RefusedAction[], max = 3): string {
  if (list.length === 0) return '';
  const n = list.length;
  const shown = list.slice(0, max).map(describeRefused).join('; ');
  const more = n > max ? `; and ${n - max} more` : '';
  return `Finished, but ${n} action${n === 1 ? ' was' : 's were'} refused: ${shown}${more}.`;
}
