import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';
import { objectId, writeLoose, writeLooseSync } from '../worktree/objects';

// Git blobs written and read in-process (decision 0059): a blob's id is
// sha1("blob <len>\0" + bytes) and it is stored zlib-deflated at objects/xx/yyyy… — exactly
// what `git hash-object -w` writes, so the shadow repository's git reads them as its own. A
// turn that writes twenty files thus costs no git process at all. The id and the write are the
// worktree's loose-object writer's (`worktree/objects.ts`), one for every object Arbor writes.

const inflate = promisify(zlib.inflate);

/** The id git gives these bytes as a blob. */
export function blobId(bytes: Buffer): string {
  return objectId('blob', bytes);
}

function objectPath(gitDir: string, id: string): string {
  return path.join(gitDir, 'objects', id.slice(0, 2), id.slice(2));
}

/**
 * Store bytes as a loose blob (once: an existing object is left alone) and return its id. Written
 * to a temp name and renamed, as git does; not fsynced (git does not either by default): see
 * decision 0059 on what an OS crash can lose and how a rewind says so.
 */
export async function writeBlob(gitDir: string, bytes: Buffer): Promise<string> {
  const id = blobId(bytes);
  await writeBlobAs(gitDir, id, bytes);
  return id;
}

/** Write the loose object of `bytes`, whose id the caller already has (asked on this thread: a rewind stores hundreds of blobs that are almost always there already). */
export function writeBlobAs(gitDir: string, id: string, bytes: Buffer): Promise<void> {
  return writeLoose(objectPath(gitDir, id), 'blob', bytes);
}

/** `writeBlobAs` on the calling thread (a writing call's `before`, stored before the call runs: no thread-pool round trips a loaded pool makes slow). */
export function writeBlobAsSync(gitDir: string, id: string, bytes: Buffer): void {
  writeLooseSync(objectPath(gitDir, id), 'blob', bytes);
}

/** A loose blob's bytes; undefined when it is not there (or not a blob). The id is checked against the bytes. */
export async function readBlob(gitDir: string, id: string): Promise<Buffer | undefined> {
  if (!/^[0-9a-f]{40}$/.test(id)) return undefined;
  let raw: Buffer;
  try {
    raw = await inflate(await fsp.readFile(objectPath(gitDir, id)));
  } catch {
    return undefined;
  }
  return blobIn(raw, id);
}

/** `readBlob` on the calling thread (a rewind plan reads hundreds of small blobs at once). */
export function readBlobSync(gitDir: string, id: string): Buffer | undefined {
  if (!/^[0-9a-f]{40}$/.test(id)) return undefined;
  let raw: Buffer;
  try {
    raw = zlib.inflateSync(fs.readFileSync(objectPath(gitDir, id)));
  } catch {
    return undefined;
  }
  return blobIn(raw, id);
}

/** The bytes of an inflated loose object when it is a blob whose id is `id`. */
function blobIn(raw: Buffer, id: string): Buffer | undefined {
  const nul = raw.indexOf(0);
  if (nul < 0 || !raw.subarray(0, nul).toString('latin1').startsWith('blob ')) return undefined;
  const bytes = raw.subarray(nul + 1);
  return blobId(bytes) === id ? bytes : undefined;
}
