import * as fs from 'node:fs';
import * as path from 'node:path';
import { appendLines, compactRecord, identityOf, keptAtLastCompaction, readRecord } from './made-record-file';
import type { BuiltInProtectedName } from './protected-names';
import type { ProtectedEntry } from './protected-walk';

export { identityOf };

// Nothing a confined command wrote becomes trusted configuration (decision 0111). A command can
// make `.arbor`, `.claude`, `.vscode` or `.git` in a folder below a workspace's top that had none
// (only the top has read-only stand-ins); the walk before each command, and the one after it,
// sees each such folder appear. Its identity (device, inode, birth time) is appended to a record
// in the user's own folder (`~/.arbor/made-by-commands.jsonl`), which no command can write, and
// whoever would trust a folder's settings, hooks, store or repository asks the record first: the
// CLI refuses to run in such a folder, the extension loads none of its hooks. `arbor trust FOLDER`
// appends the user's word that they reviewed it; a folder deleted and made again is a new inode.
//
// The record is read whole at every CLI start and extension activation, so it is kept small: past
// a size (`COMPACT_AT`, and twice what its last compaction kept) the appending process rewrites it
// with one line per identity that is still where a line of it says — a made folder that still
// exists stays refused, a trusted one trusted — and drops the identities no longer at any path
// they were recorded at (deleted, or moved away by something outside the sandbox: decision 0111,
// amended in s55). Lines appended meanwhile by other processes are carried over (`appendLines`),
// and a read that may meet a compaction under way waits for it, so it never sees the rewrite before
// its carry-over; one that cannot (the common case) takes no lock (`readSettled`).

/** The record's file name in the user's Arbor folder. */
export const MADE_RECORD_NAME = 'made-by-commands.jsonl';
/** Bytes past which an append compacts the record (when it also doubled since the last compaction). */
export const COMPACT_AT = 64 * 1024;
/** How long an append waits for another process's compaction before it leaves the compaction to it. */
const COMPACT_LOCK_WAIT_MS = 50;
/** How long a read waits for a compaction under way to carry over what was appended meanwhile. */
const READ_LOCK_WAIT_MS = 2000;

/**
 * One line of the record: a folder a walk saw appear, or the user's trust in it; or (`unsearched`,
 * `id` is `UNSEARCHED`, `path` the root) a root whose walk stopped short at a bound `since` then.
 */
interface Line {
  id: string;
  path: string;
  at: string;
  trusted?: true;
  /** ms: from when what appeared below the root may have gone unseen (decision 0123). */
  since?: number;
}

/** The `id` of an unsearched root's line: no identity `identityOf` gives. */
const UNSEARCHED = 'unsearched';

/** A protected folder of `folder` a command made, as the record has it. */
export interface MadeFolder {
  path: string;
  /** When a walk first saw it (ISO time). */
  at: string;
  /** Not seen by any walk: born below this root after its walk stopped at its bound (decision 0123). */
  unsearched?: string;
}

export interface MadeRecordOptions {
  /** Bytes past which an append compacts (default `COMPACT_AT`; tests use less). */
  compactAt?: number;
}

export class MadeRecord {
  constructor(
    readonly file: string,
    private readonly options: MadeRecordOptions = {},
  ) {}

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
   * The walk of `root` stopped short at a bound (`ProtectedTree.unsearchedSince`): below it, a
   * deciding name born since `since` (ms) that no walk saw appear may be a command's, made where the
   * walk did not reach (behind thousands of folders the command made first), and counts as made
   * until the user trusts it (decision 0123).
   */
  recordUnsearched(root: string, since: number): void {
    this.append([JSON.stringify({ id: UNSEARCHED, path: root, at: new Date().toISOString(), since } satisfies Line)]);
  }

  /**
   * The protected names that decide what `folder` is trusted with — its own names Arbor reads
   * (`ARBOR_READS`: `.arbor`, `.claude`, `.vscode`, `.mcp.json`), those the programs Arbor is
   * configured to start there read (`programs`: `.codex`, `.gemini`, an ACP agent's `protects`, …)
   * and the `.git` git would find from it — that a command made and the user has not trusted since.
   */
  madeIn(folder: string, programs: readonly string[] = []): MadeFolder[] {
    const lines = this.read();
    const made = this.untrusted(lines);
    const unsearched = lines.filter((l) => l.id === UNSEARCHED && l.since !== undefined);
    if (made.size === 0 && unsearched.length === 0) return [];
    const trusted = new Set(lines.filter((l) => l.trusted).map((l) => l.id));
    const out: MadeFolder[] = [];
    for (const p of decidingFolders(folder, programs)) {
      const id = identityOf(p);
      const l = id ? made.get(id) : undefined;
      if (l) out.push({ path: p, at: l.at });
      else if (id && !trusted.has(id)) {
        const u = unsearched.find((u) => bornUnseen(p, u));
        if (u) out.push({ path: p, at: u.at, unsearched: u.path });
      }
    }
    return out;
  }

  /**
   * Every entry of `folder` itself (not below it) a command made and the user has not trusted,
   * whatever reads it: what `trust` leaves for a program its config does not start (a `.codex` when
   * only VS Code's settings configure Codex), said so the user is not told nothing is there.
   */
  untrustedIn(folder: string): MadeFolder[] {
    let real = folder;
    try {
      real = fs.realpathSync.native(folder);
    } catch {
      return [];
    }
    const lines = this.read();
    const made = this.untrusted(lines);
    const out = new Map<string, MadeFolder>();
    // Any line's path (a folder a command moved is on the record at each path a walk saw it at).
    for (const l of lines) {
      const first = made.get(l.id);
      if (first && !out.has(l.id) && path.dirname(l.path) === real && identityOf(l.path) === l.id) out.set(l.id, { path: l.path, at: first.at });
    }
    return [...out.values()].sort((a, b) => a.path.localeCompare(b.path));
  }

  /** The identities on the record never trusted, each with its first line. */
  private untrusted(lines = this.read()): Map<string, Line> {
    // A trust is for good: what holds that identity is the folder the user reviewed (or Arbor
    // made itself), and no command can make another with it. A walk that sees it appear later
    // (another process's, the CLI's own `.arbor` made while a session ran beside) changes nothing.
    const trusted = new Set(lines.filter((l) => l.trusted).map((l) => l.id));
    const made = new Map<string, Line>();
    for (const l of lines) if (l.id !== UNSEARCHED && !l.trusted && !trusted.has(l.id) && !made.has(l.id)) made.set(l.id, l);
    return made;
  }

  /** The user reviewed `folder`: what `madeIn` finds there is trusted from now on. Returns those it trusted. */
  trust(folder: string, programs: readonly string[] = []): MadeFolder[] {
    const found = this.madeIn(folder, programs);
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
    const size = appendLines(this.file, lines);
    if (size > (this.options.compactAt ?? COMPACT_AT) && size > 2 * keptAtLastCompaction(this.file)) this.compact();
  }

  /**
   * The record rewritten with one line per identity still at a path it was recorded at (the
   * first line that saw it appear, or its first trust), under a lock file (one compaction at a
   * time; a busy one is left to its holder). Returns whether it ran.
   */
  compact(): boolean {
    return compactRecord(this.file, (text) => keptLines(parseLines(text)), COMPACT_LOCK_WAIT_MS);
  }

  /** The record's lines, as no compaction under way has them half (`readRecord`). */
  private read(): Line[] {
    return parseLines(readRecord(this.file, READ_LOCK_WAIT_MS));
  }
}

function parseLines(text: string): Line[] {
  const out: Line[] = [];
  for (const s of text.split('\n')) {
    if (!s) continue;
    try {
      const v = JSON.parse(s) as Partial<Line>;
      if (typeof v.id === 'string' && typeof v.path === 'string')
        out.push({
          id: v.id,
          path: v.path,
          at: String(v.at ?? ''),
          ...(v.trusted ? { trusted: true } : {}),
          ...(typeof v.since === 'number' ? { since: v.since } : {}),
        });
    } catch {
      // A line cut by a crash: the others still count.
    }
  }
  return out;
}

/** One line per identity still at a path one of its lines names: its first trust if it has one, else its first appearance. */
function keptLines(lines: readonly Line[]): string[] {
  const byId = new Map<string, Line[]>();
  // An unsearched root: its earliest line, while the root is there.
  const roots = new Map<string, Line>();
  for (const l of lines) {
    if (l.id !== UNSEARCHED || l.since === undefined) continue;
    const had = roots.get(l.path);
    if ((!had || l.since < (had.since ?? 0)) && fs.existsSync(l.path)) roots.set(l.path, l);
  }
  const out: string[] = [...roots.values()].map((l) => JSON.stringify(l));
  for (const l of lines) {
    if (l.id === UNSEARCHED) continue;
    const group = byId.get(l.id);
    if (group) group.push(l);
    else byId.set(l.id, [l]);
  }
  for (const [id, group] of byId) {
    const here = group.find((l) => stillThere(l.path, id));
    if (!here) continue;
    // At the path where it is now (a folder moved after it was recorded): a line kept at a path it
    // left would be dropped by the next compaction, and the folder trusted.
    const keep = group.find((l) => l.trusted) ?? group[0];
    out.push(JSON.stringify({ ...keep, path: here.path } satisfies Line));
  }
  return out;
}

/**
 * Whether `p` (a deciding name) stands below the top of `u`'s root (the top's names have stand-ins:
 * no command makes them) and was born (or, where the file system keeps no birth time, last changed)
 * since the walk there stopped short.
 */
function bornUnseen(p: string, u: Line): boolean {
  const dir = path.dirname(p);
  if (dir === u.path || !dir.startsWith(`${u.path}/`)) return false;
  try {
    const st = fs.lstatSync(p);
    return (st.birthtimeMs > 0 ? st.birthtimeMs : st.ctimeMs) >= (u.since ?? 0);
  } catch {
    return false;
  }
}

/** Whether `id` is still at `p`; a path that cannot be looked at (no permission) counts as there. */
function stillThere(p: string, id: string): boolean {
  try {
    // Without a throw for the common answer (gone): a compaction looks at every identity.
    const st = fs.lstatSync(p, { bigint: true, throwIfNoEntry: false });
    return st !== undefined && `${st.dev}:${st.ino}:${st.birthtimeNs}` === id;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code !== 'ENOENT' && code !== 'ENOTDIR';
  }
}

/**
 * What Arbor itself reads from the folder it runs in, by name (decision 0111, amended in s56): what
 * a command that made the name there would decide. Keyed by built-in protected names (the compiler
 * says so), since the walk records nothing else; the other protected names (`.codex`, `.gemini`,
 * `.opencode`, …) configure other programs, and decide only while Arbor is configured to start one
 * that reads them (`madeIn`'s `programs`). A name Arbor starts reading from a folder gets its row here.
 */
export const ARBOR_READS = {
  '.arbor': "its settings and hooks ('.arbor/settings.json'), agent files ('.arbor/agents') and, for the CLI, its store (sessions, MCP allows)",
  '.claude': "Claude Code's settings and hooks ('--claude-hooks') and agent files ('.claude/agents')",
  '.vscode': "VS Code's MCP servers ('.vscode/mcp.json')",
  '.mcp.json': 'the MCP servers the CLI and a Claude Code child start',
} as const satisfies Partial<Record<BuiltInProtectedName, string>>;

/** `folder`'s own names Arbor and its `programs` read, and the `.git` git would use there (its own, or the nearest above). */
function decidingFolders(folder: string, programs: readonly string[]): string[] {
  let real = folder;
  try {
    real = fs.realpathSync.native(folder);
  } catch {
    // A folder that is not there: its names are looked at as given.
  }
  const out = [...new Set([...Object.keys(ARBOR_READS), ...programs])].map((n) => path.join(real, n));
  for (let d = real; ; d = path.dirname(d)) {
    const git = path.join(d, '.git');
    if (fs.existsSync(git)) {
      out.push(git);
      break;
    }
    if (path.dirname(d) === d) break;
  }
  return out;
}

/** What a person is told about a folder whose configuration a command made, or may have made where no walk reached. */
export function describeMade(folder: string, made: readonly MadeFolder[]): string {
  const seen = made.filter((m) => !m.unsearched);
  const unseen = made.filter((m) => m.unsearched);
  const them = (n: number) => (n === 1 ? 'it' : 'them');
  const parts: string[] = [];
  if (seen.length > 0)
    parts.push(
      `${seen.map((m) => `${m.path} (seen ${m.at})`).join(', ')} appeared while Arbor ran confined commands around it, so a command may have made ${them(seen.length)}`,
    );
  // Made again by the user, it is born after the walk stopped short too: only trust clears it.
  for (const root of new Set(unseen.map((m) => m.unsearched)))
    parts.push(
      `${unseen
        .filter((m) => m.unsearched === root)
        .map((m) => m.path)
        .join(
          ', ',
        )} appeared after the walk of ${root} stopped at its bound (too many or too deep folders to search, since ${unseen.find((m) => m.unsearched === root)?.at}), ` +
        'so Arbor cannot tell who made it: not that a command was seen making it, but one could have',
    );
  const what = `its hooks, MCP allows, agents, settings or repository would be what that command wrote`;
  const fix =
    unseen.length > 0
      ? `Review ${them(made.length)}, then run 'arbor trust ${folder}' (made again, ${them(made.length)} would still be born after the walk stopped short)`
      : `Review ${them(made.length)}, then run 'arbor trust ${folder}', or delete ${them(made.length)} and make ${them(made.length)} again yourself`;
  return `${folder} is not trusted: ${parts.join('; ')}, and ${what}. ${fix}`;
}
