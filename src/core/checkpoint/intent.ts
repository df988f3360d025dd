import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CheckpointChange, CheckpointEvent, EventDraft, SessionEvent } from '../session/events';
import { drainIntents, writeIntentFile } from '../store/fsutil';
import { removeAtomicTemps } from '../tools/fsio';
import { blobId } from './objects';
import { fileNowOrUndefined } from './plan';

// A rewind's intent (decision 0059, amended in s48): what the rewind is about to write, made
// durable in the store before the first file is, and removed once the rewind's record is in the
// node's log. A crash in between (kill -9, a power cut) leaves it: the next open reads each file,
// records as the rewind's those that hold what it wrote (as a failure part way does in process),
// removes the temp files it left, and removes the intent. Without it the files were restored with no record, so the rewind could
// not be undone, and what it overwrote (the user's edits, kept only as unnamed blobs) was lost.

export interface RewindIntent {
  sessionId: string;
  changes: CheckpointChange[];
  rewind: NonNullable<CheckpointEvent['rewind']>;
}

export interface RecoveredRewind {
  sessionId: string;
  /** The seq of the record written for it (undo it from there); absent when none of its files had been written. */
  seq?: number;
  restored: number;
  planned: number;
}

const dirOf = (storeDir: string) => path.join(storeDir, 'checkpoints', 'rewinds');

/**
 * Write the intent durably; returns its removal (for when the record is in the log, or nothing was
 * written): durable, unless `recorded` says the rewind's record is durable in the log already.
 */
export function writeIntent(storeDir: string, callId: string, intent: RewindIntent): Promise<(recorded?: boolean) => Promise<void>> {
  return writeIntentFile(dirOf(storeDir), callId, intent);
}

/**
 * A change the rewind wrote over a file, with `beforeExecutable` read from the file: the intent
 * says it only for files the rewind removes, since the write keeps the mode of what it overwrites
 * (apply.ts; in process the record takes it from the write's own stat).
 */
function withModeKept(c: CheckpointChange): CheckpointChange {
  if (c.before === null || c.after === null || c.beforeExecutable) return c;
  const st = fs.lstatSync(c.path, { throwIfNoEntry: false });
  return st?.isFile() && (st.mode & 0o100) !== 0 ? { ...c, beforeExecutable: true } : c;
}

export interface RecoverHost {
  has(sessionId: string): boolean;
  events(sessionId: string): Promise<readonly SessionEvent[]>;
  log(sessionId: string): Promise<{ append(draft: EventDraft): Promise<SessionEvent> }>;
}

/** Every intent a crash left: its written files recorded as the rewind's, then the intent removed. */
export async function recoverIntents(storeDir: string, h: RecoverHost): Promise<RecoveredRewind[]> {
  const out: RecoveredRewind[] = [];
  // (An intent cut while written was never renamed into place: no file of that rewind was written yet.)
  await drainIntents<RewindIntent>(dirOf(storeDir), async (intent) => {
    // Recorded already (the crash came between the record and the intent's removal): nothing more to record.
    const callId = intent?.changes[0]?.callId;
    const recorded = async (id: string) => (await h.events(id)).some((e) => e.type === 'checkpoint' && e.changes.some((c) => c.callId === callId));
    if (!intent || !callId || !h.has(intent.sessionId) || (await recorded(intent.sessionId))) return;
    const done = intent.changes
      .filter((c) => {
        const now = fileNowOrUndefined(c.path);
        return now !== undefined && (now === null ? null : blobId(now)) === c.after;
      })
      .map(withModeKept);
    const r: RecoveredRewind = { sessionId: intent.sessionId, restored: done.length, planned: intent.changes.length };
    if (done.length) r.seq = (await (await h.log(intent.sessionId)).append({ type: 'checkpoint', changes: done, rewind: intent.rewind })).seq;
    out.push(r);
    await removeAtomicTemps(intent.changes.map((c) => c.path));
  });
  return out;
}
