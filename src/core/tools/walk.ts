import type { Dirent } from 'node:fs';
import * as fsp from 'node:fs/promises';

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
