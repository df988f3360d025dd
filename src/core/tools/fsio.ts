import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { beneath, beneathSync, type PinnedFolder } from './beneath';
import { NOFOLLOW } from './pinned-path';

// Opening the resolved real path: O_NOFOLLOW makes a symlink swapped in at the last
// component after resolution fail (ELOOP) instead of being followed out of the
// workspace; O_NONBLOCK keeps a FIFO from hanging the open. (Both are 0 on Windows.)
const C = fs.constants;
const NONBLOCK = C.O_NONBLOCK ?? 0;

/** Bytes inspected to decide whether a file is binary (git uses the same 8000). */
export const BINARY_SNIFF_BYTES = 8000;

/** `root`: the workspace root holding `realPath`; given, the file is reached through its folder pinned from there (`beneath.ts`). */
export async function openForRead(realPath: string, root?: string): Promise<fsp.FileHandle> {
  return beneath(realPath, root, false, openRead);
}

/** Opens `target` (a checked real path, or a name in a pinned folder) for reading: a link or a FIFO there is refused, not followed or waited on. */
export async function openRead(target: string): Promise<fsp.FileHandle> {
  return ensureRegular(await fsp.open(target, C.O_RDONLY | NOFOLLOW | NONBLOCK));
}

/**
 * Open for writing, truncating; `create` makes the file when missing. With `singleLink` a
 * file that has other names (hard links, which may lie outside the workspace) is refused
 * with code EHARDLINK: checked on the open handle, before truncating, so a link made after
 * the path was resolved is caught too.
 */
export async function openForWrite(realPath: string, create: boolean, singleLink = false): Promise<fsp.FileHandle> {
  const flags = C.O_WRONLY | (create ? C.O_CREAT : 0) | NOFOLLOW | NONBLOCK;
  const fh = await ensureRegular(await fsp.open(realPath, flags, 0o666));
  try {
    const { nlink } = await fh.stat();
    if (singleLink && nlink > 1) throw Object.assign(new Error(`the file has ${nlink} hard links`), { code: 'EHARDLINK', nlink });
    await fh.truncate(0);
    return fh;
  } catch (e) {
    await fh.close();
    throw e;
  }
}

async function ensureRegular(fh: fsp.FileHandle): Promise<fsp.FileHandle> {
  const st = await fh.stat();
  if (!st.isFile()) {
    await fh.close();
    throw Object.assign(new Error('not a regular file'), { code: 'ENOTFILE' });
  }
  return fh;
}

/** A NUL byte in the first bytes marks a binary file. */
export function looksBinary(head: Uint8Array): boolean {
  const n = Math.min(head.length, BINARY_SNIFF_BYTES);
  for (let i = 0; i < n; i++) if (head[i] === 0) return true;
  return false;
}

export async function readHead(fh: fsp.FileHandle, bytes = BINARY_SNIFF_BYTES): Promise<Buffer> {
  const buf = Buffer.alloc(bytes);
  const { bytesRead } = await fh.read(buf, 0, bytes, 0);
  return buf.subarray(0, bytesRead);
}

export async function readWhole(realPath: string, root?: string): Promise<Buffer> {
  const fh = await openForRead(realPath, root);
  try {
    return await fh.readFile();
  } finally {
    await fh.close();
  }
}

/**
 * `readWhole` without the thread pool: the same checks (no link followed, never blocking on a
 * FIFO, a regular file only) on the calling thread. For many small files read at once (a rewind
 * plan's 200 files), where each asynchronous call is five trips through libuv's four threads.
 */
export function readWholeSync(realPath: string, root?: string): Buffer {
  const fd = beneathSync(realPath, root, (target) => fs.openSync(target, C.O_RDONLY | NOFOLLOW | NONBLOCK));
  try {
    if (!fs.fstatSync(fd).isFile()) throw Object.assign(new Error('not a regular file'), { code: 'ENOTFILE' });
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The file-system calls an atomic write makes, handed in so a test can make the disk fill
 * up (ENOSPC) where no small file system can be mounted. Tools default to `realWriteOps`.
 */
export interface WriteOps {
  open(file: string, flags: number, mode: number): Promise<fsp.FileHandle>;
  rename(from: string, to: string): Promise<void>;
  unlink(file: string): Promise<void>;
}

export const realWriteOps: WriteOps = {
  open: (file, flags, mode) => fsp.open(file, flags, mode),
  rename: (from, to) => fsp.rename(from, to),
  unlink: (file) => fsp.unlink(file),
};

export interface WriteOptions {
  /** Make the file when it is missing (else ENOENT). */
  create: boolean;
  /** Refuse a file with other names (EHARDLINK); see `openForWrite`. */
  singleLink?: boolean;
  ops?: WriteOps;
  /** The caller fsyncs the folder itself, once for many files (`syncDir`): a rewind writing 200 files in two folders. */
  deferDirSync?: boolean;
  /**
   * The workspace root holding the file: given, its folder is reached from there one name at a
   * time with no symlink followed, and the file is written through that open folder
   * (`beneath.ts`, decision 0097), so a folder swapped for a symlink after the path was checked
   * is refused (PATH_CHANGED) instead of followed.
   */
  root?: string;
  /** With `root`: make the missing folders on the way (write_file's parents). */
  makeParents?: boolean;
}

/** Characters of the target's name kept in its temp file's name (names are at most 255 bytes). */
const TEMP_NAME_KEEP = 100;
/** How every temp file `writeAtomic` makes is named at the end: checkpoints never record one (decision 0070). */
export const ATOMIC_TEMP_SUFFIX = '.arbor-tmp';

/** A fresh temp name beside `realPath` for its atomic write (hidden, random, ending `ATOMIC_TEMP_SUFFIX`). */
export function atomicTempName(realPath: string): string {
  return `.${path.basename(realPath).slice(0, TEMP_NAME_KEEP)}.${randomBytes(6).toString('hex')}${ATOMIC_TEMP_SUFFIX}`;
}

/** Whether `name` (in `realPath`'s folder) is a temp file `atomicTempName` made for `realPath`. */
export function isAtomicTempOf(name: string, realPath: string): boolean {
  const head = `.${path.basename(realPath).slice(0, TEMP_NAME_KEEP)}.`;
  return name.startsWith(head) && /^[0-9a-f]{12}$/.test(name.slice(head.length, -ATOMIC_TEMP_SUFFIX.length)) && name.endsWith(ATOMIC_TEMP_SUFFIX);
}

/** Remove the temp files `atomicTempName` made beside `files` and a crash left unrenamed (a cut rewind's or apply's). */
export async function removeAtomicTemps(files: readonly string[]): Promise<void> {
  const byDir = new Map<string, string[]>();
  for (const f of files) byDir.set(path.dirname(f), [...(byDir.get(path.dirname(f)) ?? []), f]);
  for (const [dir, mine] of byDir) {
    const names = await fsp.readdir(dir).catch(() => [] as string[]);
    for (const n of names) if (mine.some((f) => isAtomicTempOf(n, f))) await fsp.rm(path.join(dir, n), { force: true }).catch(() => undefined);
  }
}

/**
 * Replace a file's content so that it is at every moment either the old content or the new
 * one: the new bytes go to a temp file in the same folder (same file system), are fsynced,
 * take the old file's mode, and are renamed over it; the folder is fsynced after. A failure
 * (a full disk) removes the temp file and leaves the original whole. `realPath` must be
 * symlink-free (resolved); a symlink found there now is refused (ELOOP), never followed, and
 * the rename replaces the entry itself, so the bytes never land outside the folder.
 *
 * A file with several hard links (only reachable when `singleLink` is off, i.e. full-access)
 * is written in place instead: a rename would give this name new bytes and leave the other
 * names on the old ones, silently splitting what the user linked on purpose.
 */
export async function writeAtomic(realPath: string, data: string | Uint8Array, opts: WriteOptions): Promise<void> {
  await beneath(realPath, opts.root, opts.makeParents === true, (target, folder) => writeAt(realPath, target, folder, data, opts));
}

/**
 * `writeAtomic` into `realPath`'s folder already pinned from its root (`inFolder`), or by path
 * where none could be pinned: a rewind writing many files of one folder walks to it once.
 */
export function writeAtomicIn(folder: PinnedFolder | undefined, realPath: string, data: string | Uint8Array, opts: WriteOptions): Promise<void> {
  return writeAt(realPath, folder ? folder.at(path.basename(realPath)) : realPath, folder, data, opts);
}

async function writeAt(realPath: string, target: string, folder: PinnedFolder | undefined, data: string | Uint8Array, opts: WriteOptions): Promise<void> {
  const ops = opts.ops ?? realWriteOps;
  let st: fs.Stats | undefined;
  try {
    st = await fsp.lstat(target);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || !opts.create) throw e;
  }
  refuseOddTarget(st);
  if (st && st.nlink > 1) {
    if (opts.singleLink) throw Object.assign(new Error(`the file has ${st.nlink} hard links`), { code: 'EHARDLINK', nlink: st.nlink });
    return writeInPlace(target, data);
  }

  const name = atomicTempName(realPath);
  const temp = folder ? folder.at(name) : path.join(path.dirname(realPath), name);
  // O_EXCL: never reuse (or follow) something already at the temp name.
  const fh = await ops.open(temp, C.O_WRONLY | C.O_CREAT | C.O_EXCL | NOFOLLOW, st ? 0o600 : 0o666);
  let renamed = false;
  try {
    try {
      if (st) {
        await fh.chmod(st.mode & 0o7777);
        await keepOwner(fh, st);
      }
      await fh.writeFile(data, typeof data === 'string' ? 'utf8' : undefined);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await ops.rename(temp, target);
    renamed = true;
  } finally {
    if (!renamed) await ops.unlink(temp).catch(() => undefined);
  }
  if (opts.deferDirSync) return;
  if (folder) await folder.sync();
  else await syncDir(path.dirname(realPath));
}

/** What stands at a write's target (undefined: nothing): a link or anything but a regular file is refused, never followed. */
export function refuseOddTarget(st: fs.Stats | undefined): void {
  if (st?.isSymbolicLink()) throw Object.assign(new Error('a symbolic link is where the file was'), { code: 'ELOOP' });
  if (st && !st.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'ENOTFILE' });
}

/** Root writing another user's file gives the new file that owner back; anyone else cannot, and need not. */
export function mustKeepOwner(st: fs.Stats): boolean {
  return process.getuid?.() === 0 && !(st.uid === 0 && st.gid === 0);
}

async function keepOwner(fh: fsp.FileHandle, st: fs.Stats): Promise<void> {
  if (mustKeepOwner(st)) await fh.chown(st.uid, st.gid).catch(() => undefined);
}

/** Make the renames in a folder durable; a folder cannot be opened for fsync everywhere (Windows), so best effort. */
export async function syncDir(dir: string): Promise<void> {
  let dh: fsp.FileHandle | undefined;
  try {
    dh = await fsp.open(dir, C.O_RDONLY);
    await dh.sync();
  } catch {
    // The data itself is synced; only the rename's durability is left to the OS.
  } finally {
    await dh?.close().catch(() => undefined);
  }
}

/**
 * A hard-linked file's write, in place: its old bytes are read first through the same handle, and
 * a write that fails part way (a full disk) puts them back before the error is thrown, so the
 * file (under every name) is its old bytes or its new ones, as with the rename. The old bytes fit:
 * they held those blocks a moment ago, and the truncate just freed them.
 */
async function writeInPlace(realPath: string, data: string | Uint8Array): Promise<void> {
  let fh: fsp.FileHandle;
  try {
    fh = await ensureRegular(await fsp.open(realPath, C.O_RDWR | NOFOLLOW | NONBLOCK));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EACCES') throw e;
    // A file its owner may write but not read: written as before, with nothing to put back.
    fh = await openForWrite(realPath, false);
    try {
      await writeAllAt(fh, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    return;
  }
  try {
    const old = await fh.readFile();
    try {
      await fh.truncate(0);
      await writeAllAt(fh, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
      await fh.sync();
    } catch (e) {
      await putBack(fh, old);
      throw e;
    }
  } finally {
    await fh.close();
  }
}

/** Every byte of `data` from offset 0 (a short write, as a disk filling up gives first, is continued until it fails). */
async function writeAllAt(fh: fsp.FileHandle, data: Uint8Array): Promise<void> {
  for (let at = 0; at < data.length; ) {
    const { bytesWritten } = await fh.write(data, at, data.length - at, at);
    if (bytesWritten === 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    at += bytesWritten;
  }
}

/** The old bytes written back after a failed in-place write (best effort: the failure is what is reported). */
async function putBack(fh: fsp.FileHandle, old: Buffer): Promise<void> {
  try {
    await fh.truncate(0);
    await writeAllAt(fh, old);
    await fh.sync();
  } catch {
    // nothing better to do: the write's own error says what happened
  }
}

export function countLines(text: string): number {
  if (text === '') return 0;
  const n = text.split('\n').length;
  return text.endsWith('\n') ? n - 1 : n;
}

/** The refusal of openForWrite for a file with several names. */
export function isHardLinkError(e: unknown): e is Error & { code: 'EHARDLINK'; nlink: number } {
  return e instanceof Error && (e as NodeJS.ErrnoException).code === 'EHARDLINK';
}
