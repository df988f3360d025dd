import type { RecoveredCalls } from './checkpoint/call-intent';
import type { RecoveredRewind } from './checkpoint/intent';
import type { CheckpointService } from './checkpoint/service';
import type { RecoveredApply } from './worktree/apply-intent';
import type { WorktreeService } from './worktree/service';

/** What an open finished or recorded of work a crash cut (decisions 0059, 0060); empty after a clean run. */
export interface RecoveredWork {
  rewinds: RecoveredRewind[];
  calls: RecoveredCalls[];
  applies: RecoveredApply[];
}

/**
 * At open, before any session runs: a rewind cut between its files and its record is recorded,
 * then a writing tool call cut between its write and its step's record, then an apply of a
 * worktree child's work cut part way is finished.
 */
export async function recoverWork(h: { checkpoints: CheckpointService; worktrees: WorktreeService }): Promise<RecoveredWork> {
  const rewinds = await h.checkpoints.recoverRewinds();
  const calls = await h.checkpoints.recoverCalls();
  const applies = await h.worktrees.recoverApplies();
  return { rewinds, calls, applies };
}

/**
 * What this open finished or recorded of work a crash cut (decisions 0059, 0060), in words a
 * host says once: a rewind's files recorded (so it can be undone), an apply of a worktree child
 * finished, or one left open because a file changed since. Empty after a clean run.
 */
export function recoveryNotes(r: RecoveredWork): string[] {
  const notes: string[] = [];
  for (const c of r.calls) {
    if (c.unrecorded?.length)
      notes.push(
        `CALL_UNRECORDED: A crash cut session ${c.sessionId} while its tools were writing, and what ${c.unrecorded.length} of its call(s) changed could not be recorded (${c.unrecorded.join('; ')}): a rewind to before that turn would not restore those files. Arbor tries again at the next start; fix what the error names (often a file or folder in the way in the store's checkpoints folder), then restart.`,
      );
    if (c.files > 0)
      notes.push(
        `A crash cut session ${c.sessionId} while its tools were writing: ${c.files} file change(s) they made are recorded now (a checkpoint), so a rewind to before that turn restores them.`,
      );
  }
  for (const w of r.rewinds)
    notes.push(
      w.seq === undefined
        ? `A rewind of session ${w.sessionId} was cut by a crash before it wrote any file; nothing changed.`
        : `A rewind of session ${w.sessionId} was cut by a crash after ${w.restored} of its ${w.planned} file(s); those are recorded as the rewind, which "Undo rewind" (\`arbor rewind ${w.sessionId} --undo ${w.seq}\`) takes back.`,
    );
  for (const a of r.applies)
    notes.push(
      a.finished
        ? `Applying the worktree of ${a.childId} was cut by a crash; it is finished now (${a.written} of its ${a.planned} file(s) written at this start) and recorded as applied.`
        : `Applying the worktree of ${a.childId} was cut by a crash, and since then ${a.changed.join(', ')} changed in the workspace: it is left as it is and the worktree stays open. Review the files, then apply again (it reports those files as conflicts) or discard.`,
    );
  return notes;
}
