import * as fs from 'node:fs';
import * as path from 'node:path';
import { PROTECTED_DIR_NAMES } from './protected-names';
import type { ProtectedEntry } from './protected-walk';

// Nothing a confined command wrote becomes trusted configuration (decision 0111). A command can
// make `.arbor`, `.claude`, `.vscode` or `.git` in a folder below a workspace's top that had none
// (only the top has read-only stand-ins); the walk before each command, and the one after it,
// sees each such folder appear. Its identity (device, inode, birth time) is appended to a record
// in the user's own folder (`~/.arbor/made-by-commands.jsonl`), which no command can write, and
// whoever would trust a folder's settings, hooks, store or repository asks the record first: the
// CLI refuses to run in such a folder, the extension loads none of its hooks. `arbor trust FOLDER`
// appends the user's word that they reviewed it; a folder deleted and made again is a new inode.

/** The record's file name in the user's Arbor folder. */
export const MADE_RECORD_NAME = 'made-by-commands.jsonl';

/** One line of the record: a folder a walk saw appear, or the user's trust in it. */
interface Line {
  id: string;
  path: string;
  at: string;
  trusted?: true;
}

/** The identity of what is at `p` (not followed): device, inode and birth time; undefined when nothing is. */
export function identityOf(p: string): string | undefined {
  try {
    const st = fs.lstatSync(p, { bigint: true });
    return `${st.dev}:${st.ino}:${st.birthtimeNs}`;
  } catch {
    return undefined;
  }
}

/** A protected folder of `folder` a command made, as the record has it. */
export interface MadeFolder {
  path: string;
  /** When a walk first saw it (ISO time). */
  at: string;
}

export class MadeRecord {
  constructor(readonly file: string) {}

  /** Appends the entries that appeared (one line each, `O_APPEND`: processes writing at once do not mix lines). */
  record(entries: readonly Pick<ProtectedEntry, 'path'>[]): void {
    const lines: string[] = [];
    const at = new Date().toISOString();
    for (const e of entries) {
      const id = identityOf(e.path);
      if (id) lines.push(JSON.stringify({ id, path: e.path, at } satisfies Line));
    }
    if (lines.length > 0) this.append(lines);
  }

  /**
   * The protected folders that decide what `folder` is trusted with — its own `.arbor`, `.claude`
   * and `.vscode`, and the `.git` git would find from it — that a command made and the user has
   * not trusted since.
   */
  madeIn(folder: string): MadeFolder[] {
    const lines = this.read();
    if (lines.length === 0) return [];
    // A trust is for good: what holds that identity is the folder the user reviewed (or Arbor
    // made itself), and no command can make another with it. A walk that sees it appear later
    // (another process's, the CLI's own `.arbor` made while a session ran beside) changes nothing.
    const trusted = new Set(lines.filter((l) => l.trusted).map((l) => l.id));
    const made = new Map<string, Line>();
    for (const l of lines) if (!l.trusted && !trusted.has(l.id) && !made.has(l.id)) made.set(l.id, l);
    if (made.size === 0) return [];
    const out: MadeFolder[] = [];
    for (const p of decidingFolders(folder)) {
      const id = identityOf(p);
      const l = id ? made.get(id) : undefined;
      if (l) out.push({ path: p, at: l.at });
    }
    return out;
  }

  /** The user reviewed `folder`: its recorded protected folders are trusted from now on. Returns those it trusted. */
  trust(folder: string): MadeFolder[] {
    const found = this.madeIn(folder);
    const at = new Date().toISOString();
    this.append(found.map((f) => JSON.stringify({ id: identityOf(f.path) ?? '', path: f.path, at, trusted: true } satisfies Line)));
    return found;
  }

  /** Arbor made `folder` itself (the CLI's store folder): trusted before any walk can record it. */
  trustOwn(folder: string): void {
    const id = identityOf(folder);
    if (id) this.append([JSON.stringify({ id, path: folder, at: new Date().toISOString(), trusted: true } satisfies Line)]);
  }

  private append(lines: readonly string[]): void {
    if (lines.length === 0) return;
    fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    fs.appendFileSync(this.file, `${lines.join('\n')}\n`, { mode: 0o600 });
  }

  private read(): Line[] {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch {
      return [];
    }
    const out: Line[] = [];
    for (const s of text.split('\n')) {
      if (!s) continue;
      try {
        const v = JSON.parse(s) as Partial<Line>;
        if (typeof v.id === 'string' && typeof v.path === 'string')
          out.push({ id: v.id, path: v.path, at: String(v.at ?? ''), ...(v.trusted ? { trusted: true } : {}) });
      } catch {
        // A line cut by a crash: the others still count.
      }
    }
    return out;
  }
}

/** `folder`'s own protected folders, and the nearest `.git` above it (the repository git would use there). */
function decidingFolders(folder: string): string[] {
  let real = folder;
  try {
    real = fs.realpathSync.native(folder);
  } catch {
    // A folder that is not there: its names are looked at as given.
  }
  const out = PROTECTED_DIR_NAMES.map((n) => path.join(real, n));
  if (fs.existsSync(path.join(real, '.git'))) return out;
  for (let d = path.dirname(real); ; d = path.dirname(d)) {
    const git = path.join(d, '.git');
    if (fs.existsSync(git)) {
      out.push(git);
      break;
    }
    if (path.dirname(d) === d) break;
  }
  return out;
}

/** What a person is told about a folder whose configuration a command made. */
export function describeMade(folder: string, made: readonly MadeFolder[]): string {
  const which = made.map((m) => `${m.path} (seen ${m.at})`).join(', ');
  return (
    `${folder} is not trusted: ${which} appeared while Arbor ran confined commands around it, so a command may have made ${made.length === 1 ? 'it' : 'them'}, ` +
    `and its hooks, MCP allows, agents, settings or repository would be what that command wrote. ` +
    `Review ${made.length === 1 ? 'it' : 'them'}, then run 'arbor trust ${folder}', or delete ${made.length === 1 ? 'it' : 'them'} and make ${made.length === 1 ? 'it' : 'them'} again yourself`
  );
}
