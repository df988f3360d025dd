import * as fs from 'node:fs';
import * as path from 'node:path';
import type { PinnedFolder } from './beneath';
import { atomicTempName, writeAtomicIn } from './fsio';

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
const NOFOLLOW = C.O_NOFOLLOW ?? 0;

export interface BatchItem {
  /** The file's resolved real path (its folder is the batch's). */
  realPath: string;
  data: Uint8Array;
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
 * after the batch. Throws the first failure; nothing of the batch is renamed when a file could
 * not be prepared or synced.
 */
export async function writeAtomicBatch(folder: PinnedFolder | undefined, items: readonly BatchItem[], root?: string): Promise<void> {
  const ready: Prepared[] = [];
  const linked: BatchItem[] = [];
  try {
    for (const item of items) {
      const target = folder ? folder.at(path.basename(item.realPath)) : item.realPath;
      const st = existing(target);
      if (st && st.nlink > 1) {
        linked.push(item);
        continue;
      }
      const temp = folder ? folder.at(atomicTempName(item.realPath)) : path.join(path.dirname(item.realPath), atomicTempName(item.realPath));
      // O_EXCL: never reuse (or follow) something already at the temp name.
      const fd = fs.openSync(temp, C.O_WRONLY | C.O_CREAT | C.O_EXCL | NOFOLLOW, st ? 0o600 : 0o666);
      ready.push({ item, target, temp, fd });
      if (st) {
        fs.fchmodSync(fd, st.mode & 0o7777);
        keepOwner(fd, st);
      }
      fs.writeFileSync(fd, item.data);
    }
    await Promise.all(ready.map((p) => new Promise<void>((ok, fail) => fs.fsync(p.fd, (e) => (e ? fail(e) : ok())))));
  } catch (e) {
    for (const p of ready) {
      closeQuietly(p.fd);
      fs.rmSync(p.temp, { force: true });
    }
    throw e;
  }
  let renamed = 0;
  try {
    for (const p of ready) fs.closeSync(p.fd);
    for (const p of ready) {
      fs.renameSync(p.temp, p.target);
      renamed++;
    }
  } catch (e) {
    for (const p of ready.slice(renamed)) fs.rmSync(p.temp, { force: true });
    throw e;
  }
  for (const item of linked) await writeAtomicIn(folder, item.realPath, item.data, { create: true, deferDirSync: true, root });
}

/** The file now at `target`: undefined when missing; a link or anything but a regular file is refused, never followed. */
function existing(target: string): fs.Stats | undefined {
  const st = fs.lstatSync(target, { throwIfNoEntry: false });
  if (st?.isSymbolicLink()) throw Object.assign(new Error('a symbolic link is where the file was'), { code: 'ELOOP' });
  if (st && !st.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'ENOTFILE' });
  return st;
}

/** Root writing another user's file gives the new file that owner back (as `writeAtomic`). */
function keepOwner(fd: number, st: fs.Stats): void {
  if (process.getuid?.() !== 0 || (st.uid === 0 && st.gid === 0)) return;
  try {
    fs.fchownSync(fd, st.uid, st.gid);
  } catch {
    // as writeAtomic: best effort
  }
}

function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // already closed (the rename phase closes first)
  }
}
