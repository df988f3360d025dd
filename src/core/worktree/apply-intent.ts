import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { drainIntents, writeIntentFile } from '../store/fsutil';
import { removeAtomicTemps } from '../tools/fsio';
import { lockPathOf, withPathLocks } from '../tools/path-lock';
import { holds, staleReason, type TreeChange, writeAll } from './merge';
import { removalsOf } from './replaced-folders';

// An apply's intent (decision 0060, amended in s49): what the apply is about to write into the
// parent's working tree, made durable in the store once every target is checked and before the
// first is written, and removed once the child's log says `applied`. A crash in between (kill -9,
// a power cut) leaves it, and with it a workspace holding part of the child's work while the tree
// showed the worktree `open` — a Discard then left half an apply in the user's files, unsaid.
// The next open finishes what the user asked for: the temp files the cut write left are removed,
// each file still as it was before the apply is written, and the child is recorded `applied`.
// A file changed since by someone else is not touched: the worktree stays open (as a PARTIAL
// apply in process does), and applying again reports it as a conflict. The rest is written by the
// apply's own `writeAll`, in its one order (removals first, `replaced-folders.ts`): what a kill
// left is a prefix of it, a folder the child made a file included.

export interface ApplyIntent {
  childId: string;
  /** The commit applied (the child's work). */
  head: string;
  /** The working tree written (its real path). */
  top: string;
  changes: TreeChange[];
}

export type RecoveredApply =
  | { childId: string; finished: true; written: number; planned: number }
  | { childId: string; finished: false; changed: string[]; planned: number };

export interface ApplyRecoveryHost {
  /**
   * The repository the child's worktree applies into, while it can still be applied (its log says
   * open or kept); a node gone or an apply recorded: undefined.
   */
  pending(childId: string): Promise<string | undefined>;
  /** Record the child applied and remove its worktree, as an apply in process does. */
  finish(childId: string, head: string, files: number): Promise<void>;
}

const dirOf = (storeDir: string) => path.join(storeDir, 'applies');

/** Write the intent durably; returns its removal (for when the record is in the log, or the apply failed in process). */
export function writeApplyIntent(storeDir: string, intent: ApplyIntent): Promise<() => Promise<void>> {
  return writeIntentFile(dirOf(storeDir), intent.childId, intent);
}

/** Every apply a crash cut: finished where the workspace still allows, then its intent removed. */
export async function recoverApplies(storeDir: string, h: ApplyRecoveryHost): Promise<RecoveredApply[]> {
  const out: RecoveredApply[] = [];
  await drainIntents<ApplyIntent>(dirOf(storeDir), async (intent) => {
    // Only into the repository the child's own log names (an intent is the store's, never an agent's, but checked all the same).
    const repo = intent && (await h.pending(intent.childId));
    if (intent && repo && (await fsp.realpath(repo).catch(() => undefined)) === intent.top) out.push(await finishApply(intent, h));
  });
  return out;
}

/** Write what the cut apply had not, under the file tools' locks, and record it — unless a file changed since. */
async function finishApply(intent: ApplyIntent, h: ApplyRecoveryHost): Promise<RecoveredApply> {
  const { childId, top, changes } = intent;
  await removeAtomicTemps(changes.map((c) => path.join(top, c.path)));
  return withPathLocks(
    changes.map((c) => lockPathOf(path.join(top, c.path))),
    async () => {
      const rest: TreeChange[] = [];
      const changed: string[] = [];
      const removed = removalsOf(changes);
      for (const c of changes) {
        if (await holds(top, c.path, c.newSha)) continue;
        if (await staleReason(top, c, removed)) changed.push(c.path);
        else rest.push(c);
      }
      if (changed.length) return { childId, finished: false, changed, planned: changes.length };
      await writeAll(top, rest);
      await h.finish(childId, intent.head, changes.length);
      return { childId, finished: true, written: rest.length, planned: changes.length };
    },
  );
}
