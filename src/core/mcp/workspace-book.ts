import * as fs from 'node:fs';
import * as path from 'node:path';

// The CLI's small JSON files in the store folder keyed by workspace, then by server name: the
// allows (`trust-file.ts`) and the pins (`pins.ts`). Written whole through a temporary file and a
// rename (readers see the old book or the new one), readable only by the user.

export type WorkspaceBook<V> = Record<string, Record<string, V>>;

/** The book in `file`; an absent or unreadable one is empty (nothing allowed, nothing pinned). */
export function readBook<V>(file: string): WorkspaceBook<V> {
  try {
    const v = JSON.parse(fs.readFileSync(file, 'utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as WorkspaceBook<V>) : {};
  } catch {
    return {};
  }
}

/** `value` set for `name` in `workspace`'s part of the book in `file`. */
export function setInBook<V>(file: string, workspace: string, name: string, value: V): void {
  const book = readBook<V>(file);
  book[workspace] = { ...book[workspace], [name]: value };
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(book, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
}
