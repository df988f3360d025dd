import * as fs from 'node:fs';
import * as path from 'node:path';
import type { PinnedFolder } from './beneath';
import { atomicTempName, mustKeepOwner, refuseOddTarget, writeAtomicIn } from './fsio';
import { NOFOLLOW } from './pinned-path';

// Many files of one folder replaced atomically at once (a rewind's 200 files, decision 0059).
// `writeAtomicIn` per file makes seven trips through libuv's four threads for each (lstat, open,
// chmod, write, fsync, close, rename), and those trips, not the disk, were most of a rewind's
// time. Here only the fsyncs go to the thread pool, all of them at once (the journal commits
// them together); the rest are quick calls made on this thread. The guarantee is the same:
// each file is at every moment its old bytes or its new ones, and the new ones are on disk
// before any name points at them. And a batch is stronger than the calls one by one: any
// file that cannot be prepared or synced stops the batch before a single rename, and no
// temp file is left behind.

const C = fs.constants;

export interface BatchItem {
  /** The file's resolved real path (its folder is the batch's). */
  realPath: string;
  data: Uint8Array;
  /** A file made anew is made executable (an existing one keeps its own mode). */
  executable?: boolean;
}

interface Prepared {
  item: BatchItem;
  target: string;
  temp: string;
  fd: number;
}

/**
 * Write every item atomically (temp file in the same folder, fsync, rename), through `folder`
 * when it is pinned (`inFolder`); the caller fsyncs the folder once after, as with
 * `deferDirSync`. A file with several hard links is written in place (`writeAtomicIn`'s rule),
 * after the batch. Resolves only once nothing of the batch is in flight, so the caller may close
 * the folder. Throws the first failure: nothing of the batch is renamed when a file could not be
 * prepared or synced; a failure after that (a rename refused because a folder now stands where
 * a file was, a hard-linked file's write) carries the real paths already written (`writtenBy`).
 * `seen` is handed each file already there as the batch stats it, before writing it (the mode it
 * keeps: a rewind records whether what it overwrites was executable without a stat of its own).
 */
export async function writeAtomicBatch(
  folder: PinnedFolder | undefined,
  items: readonly BatchItem[],
  root?: string,
  seen?: (item: BatchItem, st: fs.Stats) => void,
): Promise<void> {
  const ready: Prepared[] = [];
  const linked: BatchItem[] = [];
  try {
    for (const item of items) {
      const target = folder ? folder.at(path.basename(item.realPath)) : item.realPath;
      const st = existing(target);
      if (st) seen?.(item, st);
      if (st && st.nlink > 1) {
        linked.push(item);
        continue;
      }
      const temp = folder ? folder.at(atomicTempName(item.realPath)) : path.join(path.dirname(item.realPath), atomicTempName(item.realPath));
      // O_EXCL: never reuse (or follow) something already at the temp name.
      const fd = fs.openSync(temp, C.O_WRONLY | C.O_CREAT | C.O_EXCL | NOFOLLOW, st ? 0o600 : item.executable ? 0o777 : 0o666);
      ready.push({ item, target, temp, fd });
      if (st) {
        fs.fchmodSync(fd, st.mode & 0o7777);
        keepOwner(fd, st);
      }
      fs.writeFileSync(fd, item.data);
    }
    // Every fsync settles before anything is closed: none may land on a descriptor reused meanwhile.
    const synced = await Promise.allSettled(ready.map((p) => new Promise<void>((ok, fail) => fs.fsync(p.fd, (e) => (e ? fail(e) : ok())))));
    const failed = synced.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  } catch (e) {
    discard(ready);
    throw e;
  }
  const written: string[] = [];
  let renamed = 0;
  try {
    const closing = closeAll(ready);
    if (closing !== undefined) throw closing;
    for (const p of ready) {
      fs.renameSync(p.temp, p.target);
      written.push(p.item.realPath);
      renamed++;
    }
    for (const item of linked) {
      await writeAtomicIn(folder, item.realPath, item.data, { create: true, deferDirSync: true, root });
      written.push(item.realPath);
    }
  } catch (e) {
    for (const p of ready.slice(renamed)) removeQuietly(p.temp);
    const err = e instanceof Error ? e : new Error(String(e));
    throw Object.assign(err, { [WRITTEN]: written });
  }
}

const WRITTEN = Symbol('written');

/** The real paths a failed `writeAtomicBatch` had already written (replaced whole) before it failed. */
export function writtenBy(err: unknown): readonly string[] {
  return (err as { [WRITTEN]?: string[] } | null)?.[WRITTEN] ?? [];
}

/** Close every temp file and remove it (a batch given up before any rename). */
function discard(ready: readonly Prepared[]): void {
  closeAll(ready);
  for (const p of ready) removeQuietly(p.temp);
}

/** A temp file removed, never masking the failure being reported. */
function removeQuietly(file: string): void {
  try {
    fs.rmSync(file, { force: true });
  } catch {
    // its name ends ATOMIC_TEMP_SUFFIX: checkpoints never record it (decision 0070)
  }
}

/** Close every descriptor, each in its own try; the first failure, if any. */
function closeAll(ready: readonly Prepared[]): unknown {
  let first: unknown;
  for (const p of ready) {
    try {
      fs.closeSync(p.fd);
    } catch (e) {
      first ??= e;
    }
  }
  return first;
}

/** The file now at `target`: undefined when missing; a link or anything but a regular file is refused, never followed. */
function existing(target: string): fs.Stats | undefined {
  const st = fs.lstatSync(target, { throwIfNoEntry: false });
  refuseOddTarget(st);
  return st;
}

/** Root writing another user's file gives the new file that owner back (as `writeAtomic`). */
function keepOwner(fd: number, st: fs.Stats): void {
  if (!mustKeepOwner(st)) return;
  try {
    fs.fchownSync(fd, st.uid, st.gid);
  } catch {
    // as writeAtomic: best effort
  }
}
