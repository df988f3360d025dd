import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';

// A commit object written in-process (issue 25): the base commit of a worktree child is four
// lines of text, and a `git commit-tree` process for it cost as much as the rest of the
// snapshot's steps each. The object is exactly what git writes — sha1 of "commit <len>\0" +
// body, zlib-deflated at objects/xx/yyyy…, written to a temp name and renamed — so every git
// reads it as its own. Only for sha1 repositories with their objects in the usual place: the
// caller falls back to `git commit-tree` otherwise (`canWriteObjects`). `writeLoose` is the one
// loose-object writer: the base's tree (`index-tree.ts`) and the checkpoints' blobs use it too.

const deflate = promisify(zlib.deflate);

/** The identity of the commits Arbor makes on `arbor/*` branches (the same as `git.ts` gives git). */
const WHO = 'Arbor <arbor@localhost>';

/** Whether objects may be written in-process: a sha1 repository (40-hex ids) and no environment that moves its objects elsewhere. */
export function canWriteObjects(head: string | undefined, env: NodeJS.ProcessEnv = process.env): boolean {
  if (head !== undefined && !/^[0-9a-f]{40}$/.test(head)) return false;
  return !env.GIT_OBJECT_DIRECTORY && !env.GIT_DIR && !env.GIT_COMMON_DIR && !env.GIT_ALTERNATE_OBJECT_DIRECTORIES;
}

/** The body of a commit of `tree` on `parent` (none: a root commit), as `git commit-tree -m` makes it. */
export function commitBody(tree: string, parent: string | undefined, message: string, when: Date = new Date()): string {
  const secs = Math.floor(when.getTime() / 1000);
  const off = -when.getTimezoneOffset();
  const tz = `${off < 0 ? '-' : '+'}${String(Math.floor(Math.abs(off) / 60)).padStart(2, '0')}${String(Math.abs(off) % 60).padStart(2, '0')}`;
  const stamp = `${WHO} ${secs} ${tz}`;
  // As `commit-tree -m` takes it: verbatim (no NUL can come through argv), ending in a newline.
  const text = message.replace(/\0/g, '');
  return `tree ${tree}\n${parent ? `parent ${parent}\n` : ''}author ${stamp}\ncommitter ${stamp}\n\n${text}${text.endsWith('\n') ? '' : '\n'}`;
}

/** Write a commit object into `objectsDir` and return its id. */
export function writeCommit(objectsDir: string, body: string): Promise<string> {
  return writeObject(objectsDir, 'commit', Buffer.from(body, 'utf8'));
}

/**
 * The tree of commit `id` when it is a loose object here (read on the calling thread, its id
 * checked against its bytes); undefined otherwise (packed, absent, not a commit): the caller then
 * does without it.
 */
export function looseCommitTree(objectsDir: string, id: string): string | undefined {
  if (!/^[0-9a-f]{40}$/.test(id)) return undefined;
  let raw: Buffer;
  try {
    raw = zlib.inflateSync(fs.readFileSync(path.join(objectsDir, id.slice(0, 2), id.slice(2))));
  } catch {
    return undefined;
  }
  const nul = raw.indexOf(0);
  const head = raw.subarray(0, nul).toString('latin1');
  const body = raw.subarray(nul + 1);
  if (nul < 0 || head !== `commit ${body.length}` || objectId('commit', body) !== id) return undefined;
  return /^tree ([0-9a-f]{40})\n/.exec(body.subarray(0, 46).toString('latin1'))?.[1];
}

/** Git's id of an object of `type` holding `bytes`: sha1 of "<type> <len>\0" + bytes. */
export function objectId(type: LooseType, bytes: Buffer): string {
  return createHash('sha1').update(`${type} ${bytes.length}\0`).update(bytes).digest('hex');
}

export type LooseType = 'blob' | 'commit' | 'tree';

/** Write a loose object of `type` (once: one already there is left alone) and return its id. */
export async function writeObject(objectsDir: string, type: 'commit' | 'tree', bytes: Buffer): Promise<string> {
  const id = objectId(type, bytes);
  await writeLoose(path.join(objectsDir, id.slice(0, 2), id.slice(2)), type, bytes);
  return id;
}

/** `writeObject` on the calling thread, for the small objects of a base (decision 0082): a few hundred bytes each, where a thread-pool trip per step costs more than the work. */
export function writeObjectSync(objectsDir: string, type: LooseType, bytes: Buffer): string {
  const id = objectId(type, bytes);
  writeLooseSync(path.join(objectsDir, id.slice(0, 2), id.slice(2)), type, bytes);
  return id;
}

/** `writeLoose` on the calling thread. */
export function writeLooseSync(file: string, type: LooseType, bytes: Buffer): void {
  if (fs.existsSync(file)) return;
  // A small object gets a small window: zlib's set-up for the default one costs more than the object (any window inflates with git's).
  const small = bytes.length < 4096 ? { windowBits: 10, memLevel: 2 } : {};
  const packed = zlib.deflateSync(Buffer.concat([Buffer.from(`${type} ${bytes.length}\0`), bytes]), { level: 1, ...small });
  const temp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    fs.writeFileSync(temp, packed, { mode: 0o444 });
  } catch (e) {
    // The fan-out folder is usually there: made only when it is not.
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(temp, packed, { mode: 0o444 });
  }
  try {
    fs.renameSync(temp, file);
  } catch (e) {
    fs.rmSync(temp, { force: true });
    throw e;
  }
}

/**
 * Write the loose object file `file` of `type` holding `bytes`, once: one already there is left
 * alone (asked on this thread, before anything is deflated: callers store objects that are almost
 * always there already). Deflated, written to a temp name and renamed, as git does; not fsynced
 * (git does not either by default, decision 0059). The checkpoints' blobs are written by it too.
 */
export async function writeLoose(file: string, type: LooseType, bytes: Buffer): Promise<void> {
  if (fs.existsSync(file)) return;
  const packed = await deflate(Buffer.concat([Buffer.from(`${type} ${bytes.length}\0`), bytes]), { level: 1 });
  await fsp.mkdir(path.dirname(file), { recursive: true });
  const temp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  await fsp.writeFile(temp, packed, { mode: 0o444 });
  await fsp.rename(temp, file).catch(async (e) => {
    await fsp.unlink(temp).catch(() => undefined);
    throw e;
  });
}
