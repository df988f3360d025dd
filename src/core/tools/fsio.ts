import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';

// Opening the resolved real path: O_NOFOLLOW makes a symlink swapped in at the last
// component after resolution fail (ELOOP) instead of being followed out of the
// workspace; O_NONBLOCK keeps a FIFO from hanging the open. (Both are 0 on Windows.)
const C = fs.constants;
const NOFOLLOW = C.O_NOFOLLOW ?? 0;
const NONBLOCK = C.O_NONBLOCK ?? 0;

/** Bytes inspected to decide whether a file is binary (git uses the same 8000). */
export const BINARY_SNIFF_BYTES = 8000;

export async function openForRead(realPath: string): Promise<fsp.FileHandle> {
  const fh = await fsp.open(realPath, C.O_RDONLY | NOFOLLOW | NONBLOCK);
  return ensureRegular(fh);
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

export async function readWhole(realPath: string): Promise<Buffer> {
  const fh = await openForRead(realPath);
  try {
    return await fh.readFile();
  } finally {
    await fh.close();
  }
}

export async function writeWhole(realPath: string, data: string, create: boolean, singleLink = false): Promise<void> {
  const fh = await openForWrite(realPath, create, singleLink);
  try {
    await fh.writeFile(data, 'utf8');
  } finally {
    await fh.close();
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
