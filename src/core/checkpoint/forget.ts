import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { hexIds } from './blob-refs';
import { git } from './git';
import type { BlobPins } from './pins';

// What a deleted conversation recorded goes with it (decision 0059, amended s57). After a
// deletion is durable (the commit point), every loose blob of every shadow repository of the
// store that nothing needs any more is removed: needed are the blobs a remaining session's
// `checkpoint` events name (the index of `blob-refs.ts`, decision 0121: no log read), those of the shadow's index (the latest snapshot: the workspace's
// content now), those a crash's intents name (`calls/`, `rewinds/`: their trees read whole), and
// those a recording of this process holds (`pins.ts`: checked on this thread just before each
// removal). Only blobs go: trees and commits stay. A kill between the deletion and the sweep
// leaves unneeded blobs only, which the next sweep removes (it looks at every loose blob, not
// only the deleted sessions').

export interface ForgetHost {
  storeDir: string;
  pins: BlobPins;
  /** Whether a remaining session's checkpoint events name an id (`blob-refs.ts`: asked per blob while the sweep runs). */
  referenced(): Promise<Kept>;
  /** The roots of the shadows this process opened, by their git folder: their index is read against the workspace. */
  roots?: ReadonlyMap<string, string>;
  /** The size cap of a recorded file (a file over it stays in the index as it was). */
  maxFileBytes?: number;
}

/** What a sweep asks of the remaining sessions' blobs. */
export type Kept = { has(id: string): boolean };

export interface Forgotten {
  /** Blob files removed (and leftover temp files of a cut write). */
  removed: number;
  /** Shadows that could not be swept (their index unreadable): what failed; their blobs stay. */
  failed: string[];
}

const SHADOW = /^[0-9a-f]{16}\.git$/;

/** Remove the blobs no remaining session, index, intent or recording needs, from every shadow of the store. */
export async function forgetBlobs(h: ForgetHost): Promise<Forgotten> {
  const top = path.join(h.storeDir, 'checkpoints');
  const shadows = (await fsp.readdir(top).catch(() => [] as string[])).filter((n) => SHADOW.test(n));
  const out: Forgotten = { removed: 0, failed: [] };
  if (shadows.length === 0) return out;
  h.pins.settle();
  const kept = await h.referenced();
  const roots = new Set(await intentIds(top));
  for (const name of shadows) {
    const gitDir = path.join(top, name);
    try {
      out.removed += await sweep(gitDir, kept, roots, h.pins, h.roots?.get(gitDir), h.maxFileBytes ?? Number.POSITIVE_INFINITY);
    } catch (e) {
      out.failed.push(`${name}: ${(e as Error).message}`);
    }
  }
  return out;
}

/** Every id the crash intents name (a call's blob or roots' trees, a rewind's files). */
async function intentIds(top: string): Promise<string[]> {
  const ids: string[] = [];
  for (const sub of ['calls', 'rewinds']) {
    const dir = path.join(top, sub);
    for (const n of await fsp.readdir(dir).catch(() => [] as string[])) {
      const text = await fsp.readFile(path.join(dir, n), 'utf8').catch(() => '');
      ids.push(...hexIds(text));
    }
  }
  return ids;
}

async function sweep(gitDir: string, kept: Kept, roots: Set<string>, pins: BlobPins, root: string | undefined, maxFileBytes: number): Promise<number> {
  const place = { gitDir, workTree: gitDir };
  const need = new Set<string>();
  const run = async (args: string[], at = place): Promise<string> => {
    const r = await git(at, args);
    if (r.code !== 0) throw new Error(`git ${args[0]} failed: ${r.stderr.trim().slice(0, 300)}`);
    return r.stdout;
  };
  const listed = async (args: string[]): Promise<void> => {
    for (const line of (await run(args)).split('\0')) for (const id of hexIds(line)) need.add(id);
  };
  // The index: the latest snapshot of the root (a command's next diff starts from it), less the
  // entries of files changed since (a file tool's write, the user's edit): the next snapshot
  // reads those files again and replaces their entries before git writes a tree, so their old
  // blob is needed by no one — the deleted session's overwrite of a tracked file left it there.
  // Kept: a file over the size cap (its entry stays as it is) and a name not UTF-8 (never named back to git).
  if (fs.existsSync(path.join(gitDir, 'index'))) {
    // (A root gone, a worktree removed with its session, or a listing that fails: every entry kept, as its index says.)
    const changed = root && fs.existsSync(root) ? await git({ gitDir, workTree: root }, ['ls-files', '-z', '--modified', '--deleted']) : undefined;
    const stale = new Set(changed?.code === 0 ? changed.stdout.split('\0') : []);
    for (const entry of (await run(['ls-files', '-z', '--stage'])).split('\0')) {
      const tab = entry.indexOf('\t');
      if (tab < 0) continue;
      const rel = entry.slice(tab + 1);
      if (root && stale.has(rel) && !rel.includes('\ufffd') && !overCap(path.join(root, rel), maxFileBytes)) continue;
      for (const id of hexIds(entry.slice(0, tab))) need.add(id);
    }
  }
  for (const t of roots) if (looseType(gitDir, t) === 'tree') await listed(['ls-tree', '-r', '-z', t]);
  // The trees a recording holds, read after the index and again whenever one was handed out
  // since: a command run while earlier shadows were swept had its before tree taken from an
  // index that named a blob (stat-matched: read by no one, so pinned by no one) its after
  // snapshot has replaced since — the tree is all that still names its `before`.
  const trees = new Set<string>();
  let seen = -1;
  const pinnedTrees = async (): Promise<void> => {
    while (seen !== pins.treesHanded) {
      seen = pins.treesHanded;
      for (const t of pins.pinnedTrees()) {
        if (trees.has(t)) continue;
        trees.add(t);
        if (looseType(gitDir, t) === 'tree') await listed(['ls-tree', '-r', '-z', t]);
      }
    }
  };
  await pinnedTrees();
  const objects = path.join(gitDir, 'objects');
  let removed = 0;
  for (const fan of await fsp.readdir(objects).catch(() => [] as string[])) {
    if (!/^[0-9a-f]{2}$/.test(fan)) continue;
    for (const n of await fsp.readdir(path.join(objects, fan)).catch(() => [] as string[])) {
      const id = fan + n.slice(0, 38);
      if (!/^[0-9a-f]{40}$/.test(id) || kept.has(id) || need.has(id)) continue;
      const file = path.join(objects, fan, n);
      const temp = n.length > 38;
      if (!temp && looseType(gitDir, id) !== 'blob') continue;
      if (seen !== pins.treesHanded) {
        await pinnedTrees();
        if (need.has(id)) continue;
      }
      // Asked and removed on this thread, with nothing between: a recording that pins the id
      // later finds no object and writes it again (`pins.ts`).
      if (pins.has(id)) continue;
      try {
        fs.unlinkSync(file);
        removed++;
      } catch {
        // gone already, or not ours to remove: it stays
      }
    }
  }
  return removed;
}

/** Whether `file` (its last name not followed) is a regular file over the cap: a snapshot leaves its entry as it is. */
function overCap(file: string, maxFileBytes: number): boolean {
  try {
    const st = fs.lstatSync(file);
    return st.isFile() && st.size > maxFileBytes;
  } catch {
    return false;
  }
}

/** The type of a loose object (its header, from the first bytes inflated); undefined when absent or unreadable. */
function looseType(gitDir: string, id: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(path.join(gitDir, 'objects', id.slice(0, 2), id.slice(2)), 'r');
    const head = Buffer.alloc(64);
    const n = fs.readSync(fd, head, 0, 64, 0);
    const raw = zlib.inflateSync(head.subarray(0, n), { finishFlush: zlib.constants.Z_SYNC_FLUSH });
    return /^(blob|tree|commit|tag) /.exec(raw.subarray(0, 16).toString('latin1'))?.[1];
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
