import type { Dirent } from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { PinnedFolder, pinsFolder } from './beneath';

/** Directories no listing or search descends into: huge, generated, or not the model's business. */
export const SKIPPED_DIRS: ReadonlySet<string> = new Set(['.git', 'node_modules']);

/** Directory entries sorted by name (code units, so the order is the same everywhere). */
export async function sortedEntries(dir: string): Promise<Dirent[]> {
  const entries = await fsp.readdir(dir, { withFileTypes: true });
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** `a` + `/` + `b`, where `.` stands for the root itself. */
export function joinRel(dir: string, name: string): string {
  return dir === '.' || dir === '' ? name : `${dir}/${name}`;
}

/**
 * A folder a listing or a search walks (decision 0097, amended). Inside a root on Linux it is
 * held open from that root, and its entries, its files and its subfolders are named through it:
 * a subfolder swapped for a link while the walk goes is refused (`PathChangedError`), never
 * followed out of the workspace. Elsewhere (outside every root, which only full-access reads;
 * not Linux) it goes by path, as `beneath` does.
 */
export class WalkDir {
  private constructor(
    /** Its real path as the walk met it (for messages and the paths shown). */
    readonly realPath: string,
    private readonly pinned: PinnedFolder | undefined,
  ) {}

  /** `realPath` (a checked folder) opened for a walk, from `root` when it is inside one. */
  static async open(realPath: string, root: string | undefined): Promise<WalkDir> {
    return new WalkDir(realPath, pinsFolder(realPath, root) ? await PinnedFolder.open(root, realPath, false) : undefined);
  }

  entries(): Promise<Dirent[]> {
    return sortedEntries(this.pinned ? this.pinned.self : this.realPath);
  }

  /** The path that names entry `name` of this folder (through the open folder where it is pinned). */
  at(name: string): string {
    return this.pinned ? this.pinned.at(name) : path.join(this.realPath, name);
  }

  /** The subfolder `name`, opened for the walk; the caller closes it. */
  async child(name: string): Promise<WalkDir> {
    const realPath = path.join(this.realPath, name);
    return new WalkDir(realPath, this.pinned ? await this.pinned.folder(name, realPath) : undefined);
  }

  async close(): Promise<void> {
    await this.pinned?.close();
  }
}
