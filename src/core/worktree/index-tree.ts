import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { objectId, writeLoose } from './objects';

// `git write-tree` in-process (issue 25, decision 0076): the tree of an index git just wrote
// (the snapshot's `add -A`), its tree objects written as loose objects. Only the plain case is
// read here — index version 2 or 3, every entry at stage 0, no skip-worktree or intent-to-add
// entry, no split or sparse index — and anything else answers undefined, so the caller runs git.
// The index is in path order, which is also the order of every tree's entries (a folder sorts as
// its name plus "/"), so each folder's entries come out in order as they are met. The entries'
// stat data is read too: the in-process snapshot (`work-tree.ts`, decision 0082) trusts it as git does.

interface Folder {
  /** Entries in order: a file's mode and id, or a sub-folder. */
  items: { name: string; mode?: number; id?: Buffer; folder?: Folder }[];
}

/** An index entry: its path (bytes as latin1), mode, id, and the stat data git recorded for it. */
export interface IndexEntry {
  path: string;
  mode: number;
  id: Buffer;
  ctimeS: number;
  ctimeN: number;
  mtimeS: number;
  mtimeN: number;
  ino: number;
  uid: number;
  gid: number;
  size: number;
  /** "Assume unchanged" (`update-index --assume-unchanged`): git does not look at the file. */
  assumeValid: boolean;
}

const EXT_SKIP_WORKTREE = 1 << 14;
const EXT_INTENT_TO_ADD = 1 << 13;

/** The entries of a plain index; undefined for anything this reader leaves to git. */
export function readPlainIndex(buf: Buffer): IndexEntry[] | undefined {
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== 'DIRC') return undefined;
  const version = buf.readUInt32BE(4);
  if (version !== 2 && version !== 3) return undefined;
  const count = buf.readUInt32BE(8);
  const out: IndexEntry[] = [];
  let at = 12;
  for (let i = 0; i < count; i++) {
    if (at + 62 > buf.length) return undefined;
    const flags = buf.readUInt16BE(at + 60);
    let nameAt = at + 62;
    if (flags & 0x4000) {
      if (version < 3) return undefined;
      const ext = buf.readUInt16BE(nameAt);
      if (ext & (EXT_SKIP_WORKTREE | EXT_INTENT_TO_ADD)) return undefined;
      nameAt += 2;
    }
    if ((flags >> 12) & 3) return undefined;
    const end = buf.indexOf(0, nameAt);
    if (end < 0) return undefined;
    out.push({
      // latin1 both ways: a path's bytes come back unchanged whatever their encoding.
      path: buf.toString('latin1', nameAt, end),
      mode: buf.readUInt32BE(at + 24),
      id: buf.subarray(at + 40, at + 60),
      ctimeS: buf.readUInt32BE(at),
      ctimeN: buf.readUInt32BE(at + 4),
      mtimeS: buf.readUInt32BE(at + 8),
      mtimeN: buf.readUInt32BE(at + 12),
      ino: buf.readUInt32BE(at + 20),
      uid: buf.readUInt32BE(at + 28),
      gid: buf.readUInt32BE(at + 32),
      size: buf.readUInt32BE(at + 36),
      assumeValid: (flags & 0x8000) !== 0,
    });
    // Padded with 1–8 NULs to a multiple of 8 from the entry's start.
    at += (end - at + 8) & ~7;
  }
  // Extensions: a split index keeps entries elsewhere, a sparse one has folder entries.
  while (at + 8 <= buf.length - 20) {
    const sig = buf.toString('latin1', at, at + 4);
    if (sig === 'link' || sig === 'sdir') return undefined;
    at += 8 + buf.readUInt32BE(at + 4);
  }
  return out;
}

/** The tree id of the index file at `indexFile`, its trees written into `objectsDir`; undefined: ask git. */
export async function writeIndexTree(indexFile: string, objectsDir: string): Promise<string | undefined> {
  const entries = readPlainIndex(await fsp.readFile(indexFile));
  return entries && writeTreeOf(entries, objectsDir);
}

/** The tree of `entries` (in index order: by path bytes), its tree objects written into `objectsDir`. */
export async function writeTreeOf(entries: readonly { path: string; mode: number; id: Buffer }[], objectsDir: string): Promise<string> {
  const writes: Promise<void>[] = [];
  const id = treeOf(entries, (bytes) => {
    const id = objectId('tree', bytes);
    writes.push(writeLoose(path.join(objectsDir, id.slice(0, 2), id.slice(2)), 'tree', bytes));
    return id;
  });
  await Promise.all(writes);
  return id;
}

/** The tree id of `entries` (in index order), each tree object handed to `put`, which stores it and returns its id. */
export function treeOf(entries: readonly { path: string; mode: number; id: Buffer }[], put: (tree: Buffer) => string): string {
  const root: Folder = { items: [] };
  for (const e of entries) {
    const parts = e.path.split('/');
    let folder = root;
    for (const part of parts.slice(0, -1)) {
      const last = folder.items[folder.items.length - 1];
      if (last?.name === part && last.folder) folder = last.folder;
      else {
        const next: Folder = { items: [] };
        folder.items.push({ name: part, folder: next });
        folder = next;
      }
    }
    folder.items.push({ name: parts[parts.length - 1], mode: e.mode, id: e.id });
  }
  return putFolder(root, put).toString('hex');
}

function putFolder(folder: Folder, put: (tree: Buffer) => string): Buffer {
  const parts: Buffer[] = [];
  for (const item of folder.items) {
    const id = item.folder ? putFolder(item.folder, put) : (item.id as Buffer);
    const mode = item.folder ? '40000' : (item.mode as number).toString(8);
    parts.push(Buffer.from(`${mode} ${item.name}\0`, 'latin1'), id);
  }
  return Buffer.from(put(Buffer.concat(parts)), 'hex');
}
