import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { describeError } from '../errors';
import type { EventDraft, SessionEvent } from '../session/events';
import { inFolder } from '../tools/beneath';
import { syncDir } from '../tools/fsio';
import { writeAtomicBatch, writtenBy } from '../tools/write-batch';
import type { RewindIntent } from './intent';
import { blobId } from './objects';
import { fileNowOrUndefined, RewindError, type RewindFile, type RewindPlan, restoredBytes } from './plan';
import type { Shadows } from './shadow';

// Applying a rewind plan (decision 0059): all or nothing up front — an unresolved conflict or a
// file that changed since the preview refuses the whole apply before anything is written —
// then each file is written atomically (the tools' own `writeAtomic`), and the rewind is
// recorded in the node's log as a `checkpoint` of tool `rewind` whose befores are what it
// overwrote (stored as blobs first), so the rewind itself can be undone.

export type RewindChoice = 'restore' | 'keep';

export interface ApplyHost {
  shadows: Shadows;
  log(id: string): Promise<{ append(draft: EventDraft): Promise<SessionEvent> }>;
  /** Make the rewind's intent durable before any file is written (`intent.ts`); returns its removal (`recorded`: the record is durable). */
  intend(intent: RewindIntent): Promise<(recorded?: boolean) => Promise<void>>;
}

/** Where an apply's time went, in ms of wall time, one phase after another (the bench prints them). */
export interface ApplyPhases {
  /** The intent made durable (a file and its folder fsynced). */
  intent: number;
  /** Each file read again and checked against the preview, what it overwrites stored, its folders checked. */
  checks: number;
  /** The files written: temp files, their fsyncs, renames, removals, each folder fsynced. */
  writes: number;
  /** The rewind's record in the node's log (its group commit), the intent removed. */
  record: number;
}

export interface RewindOutcome {
  /** Files written back (absolute paths). */
  restored: string[];
  /** Files left as they are (a conflict the caller chose to keep, or content no longer stored). */
  kept: string[];
  /** The seq of the rewind's own record in the node's log (undo it with `planUndo`); absent when nothing was written. */
  seq?: number;
  /** Where the apply's time went; absent when nothing was written. */
  phases?: ApplyPhases;
}

export async function applyRewind(
  h: ApplyHost,
  plan: RewindPlan,
  choices: Readonly<Record<string, RewindChoice>> = {},
  onConflict?: RewindChoice,
): Promise<RewindOutcome> {
  const unresolved = plan.files.filter((f) => f.conflict && f.conflict.reason !== 'unavailable' && !(choices[f.path] ?? onConflict));
  if (unresolved.length) {
    throw new RewindError(
      'CONFLICT',
      `Nothing was changed: ${unresolved.length} file(s) need a choice first (restore or keep): ${unresolved.map((f) => f.relative).join(', ')}.`,
    );
  }
  const restore = (f: RewindFile) => f.conflict?.reason !== 'unavailable' && (!f.conflict || (choices[f.path] ?? onConflict) === 'restore');
  const chosen = plan.files.filter(restore);
  const kept = plan.files.filter((f) => !restore(f)).map((f) => f.path);
  if (chosen.length === 0) return { restored: [], kept };
  const callId = `rewind-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
  // What it overwrites was executable: an undo that makes it again makes it executable. A file it
  // removes is looked at here (the intent says it: nothing is left to look at after); a file it
  // writes, by the write's own stat of it (write-batch.ts `seen`), which keeps that mode, so a
  // recovery reads the bit from the file (intent.ts).
  const executables = new Set(chosen.filter((f) => f.current !== null && f.restore === null && executableNow(f.path)).map((f) => f.path));
  const changeOf = (f: RewindFile) => ({
    path: f.path,
    root: f.root,
    before: f.current,
    after: f.restore,
    callId,
    tool: 'rewind',
    ...(executables.has(f.path) ? { beforeExecutable: true as const } : {}),
  });
  const rewind = {
    ...(plan.toSeq !== undefined ? { toSeq: plan.toSeq } : {}),
    ...(plan.undoes !== undefined ? { undoes: plan.undoes } : {}),
    subtree: plan.subtree,
    sessions: plan.sessions,
  };
  // Durable before the first file is written: a crash before the record below leaves it, and the
  // next open records what was written (intent.ts). Written before the checks, so it adds nothing
  // to the time between checking a file and writing it; a refusal removes it.
  const t0 = performance.now();
  const settleIntent = await h.intend({ sessionId: plan.sessionId, changes: chosen.map(changeOf), rewind });
  const t1 = performance.now();
  let blobs: (Buffer | null | undefined)[];
  try {
    blobs = await checked(h, chosen);
  } catch (e) {
    await settleIntent();
    throw e;
  }
  const t2 = performance.now();
  // Each folder is pinned from its root once (beneath.ts: a folder swapped for a link since the
  // check above is refused, never followed); its files are written atomically through it as one
  // batch (write-batch.ts: temp files, their fsyncs all at once, then the renames), then the
  // folder is fsynced once, which makes the renames in it durable.
  const byFolder = new Map<string, number[]>();
  chosen.forEach((f, i) => {
    const dir = path.dirname(f.path);
    const members = byFolder.get(dir);
    if (members) members.push(i);
    else byFolder.set(dir, [i]);
  });
  // What was written, for the record: all of it, or what a failure part way left restored.
  const written = new Set<number>();
  const folderWork = await Promise.allSettled(
    [...byFolder].map(([dir, members]) =>
      inFolder(
        dir,
        chosen[members[0]].root,
        members.some((i) => blobs[i]),
        async (folder) => {
          // Nothing here outlives this function: the folder's descriptor closes when it returns.
          const writes = members.filter((i) => blobs[i]);
          try {
            try {
              await writeAtomicBatch(
                folder,
                writes.map((i) => ({ realPath: chosen[i].path, data: blobs[i] as Buffer, executable: chosen[i].executable })),
                chosen[members[0]].root,
                (item, st) => {
                  if (st.isFile() && (st.mode & 0o100) !== 0) executables.add(item.realPath);
                },
              );
            } catch (err) {
              const done = new Set(writtenBy(err));
              for (const i of writes) if (done.has(chosen[i].path)) written.add(i);
              throw err;
            }
            for (const i of writes) written.add(i);
            for (const i of members.filter((m) => !blobs[m])) {
              fs.rmSync(folder ? folder.at(path.basename(chosen[i].path)) : chosen[i].path, { force: true });
              written.add(i);
            }
          } finally {
            // The renames made, durable even when the folder's batch stopped part way.
            if (folder) await folder.sync();
            else await syncDir(dir);
          }
        },
      ),
    ),
  );
  const failure = folderWork.find((r) => r.status === 'rejected');
  if (failure && written.size === 0) {
    await settleIntent();
    throw failure.reason;
  }
  const t3 = performance.now();
  const done = chosen.filter((_, i) => written.has(i));
  const log = await h.log(plan.sessionId);
  // (Should this append fail, the intent stays and the next open records the files.)
  const e = await log.append({ type: 'checkpoint', changes: done.map(changeOf), rewind });
  await settleIntent(true);
  const phases: ApplyPhases = { intent: t1 - t0, checks: t2 - t1, writes: t3 - t2, record: performance.now() - t3 };
  if (failure) {
    const why = describeError(failure.reason);
    throw new RewindError(
      'PARTIAL',
      `The rewind stopped part way: ${done.length} of ${chosen.length} file(s) were restored and recorded (event ${e.seq}: undo it from there), the rest left as they were, because ${why}. Fix that, then preview the rewind again for what is left.`,
    );
  }
  return { restored: done.map((f) => f.path), kept, seq: e.seq, phases };
}

/**
 * The checks that refuse the whole apply before anything is written: each file still what the
 * preview saw, its earlier content still stored (what it overwrites stored too, for the undo), no
 * folder on its path turned into a link. Returns the bytes each file goes back to (null: removed).
 */
async function checked(h: ApplyHost, chosen: readonly RewindFile[]): Promise<(Buffer | null | undefined)[]> {
  // What is there now, checked against the preview: a file changed since is never overwritten unseen.
  // Something not a file put there since (a folder, a link) is a change since the preview too.
  const now = chosen.map((f) => fileNowOrUndefined(f.path));
  const moved = chosen.filter((f, i) => now[i] === undefined || (now[i] === null ? null : blobId(now[i] as Buffer)) !== f.current);
  if (moved.length) {
    throw new RewindError('STALE_PLAN', `Nothing was changed: ${moved.map((f) => f.relative).join(', ')} changed since the preview; preview the rewind again.`);
  }
  const blobs = await Promise.all(
    chosen.map(async (f, i) => {
      const shadow = await h.shadows.of(f.root);
      const bytes = f.restore === null ? null : (restoredBytes.get(f) ?? (await shadow.blob(f.restore)));
      if (f.restore !== null && !bytes)
        throw new RewindError('STALE_PLAN', `Nothing was changed: the earlier content of ${f.relative} is gone from the checkpoint store.`);
      const cur = now[i];
      if (cur) await shadow.storeBlob(cur); // what the rewind overwrites, kept for its undo
      return bytes;
    }),
  );
  // A folder on a file's path that became a link since it was recorded (to somewhere outside the
  // workspace, say) would carry the write there: such a file is refused before anything is written.
  const folders = new Map<string, Promise<boolean>>();
  const folderOk = (f: RewindFile) => {
    const dir = path.dirname(f.path);
    let ok = folders.get(dir);
    if (!ok) folders.set(dir, (ok = realFolder(f.path)));
    return ok;
  };
  const linked = (await Promise.all(chosen.map(async (f) => ((await folderOk(f)) ? undefined : f.relative)))).filter((x) => x !== undefined);
  if (linked.length) {
    throw new RewindError(
      'STALE_PLAN',
      `Nothing was changed: a folder on the path of ${linked.join(', ')} is now a symbolic link; fix the folder, then preview the rewind again.`,
    );
  }
  return blobs;
}

/** Whether the file is a regular file with its owner's executable bit. */
function executableNow(file: string): boolean {
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  return !!st?.isFile() && (st.mode & 0o100) !== 0;
}

/** Whether the nearest existing folder on the file's path is its own real path (no link on the way). */
async function realFolder(file: string): Promise<boolean> {
  for (let dir = path.dirname(file); ; ) {
    try {
      return (await fsp.realpath(dir)) === dir;
    } catch {
      const up = path.dirname(dir);
      if (up === dir) return false;
      dir = up;
    }
  }
}
