import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CheckpointChange, CheckpointSkip, ToolCall } from '../session/events';
import { beneathSync } from '../tools/beneath';
import { readWhole } from '../tools/fsio';
import { isWithin } from '../tools/paths';
import { READ_AS_IS } from '../tools/pinned-path';
import type { ToolContext } from '../tools/tool';
import { recordedChange, type ShadowRepo, type Shadows } from './shadow';

// What one writing call found before it ran and left after (decision 0059): a file tool's file,
// read just before the tool writes and just after, hashed and stored in-process; a command's
// writable roots (the call's own `ctx.roots`: a child in a worktree has other roots than the
// harness), snapshotted before and after it and the two trees compared. The recorder
// (`recorder.ts`) holds what this finds until the step's record.

/** How each tool that writes is recorded: the file it names, or its whole writable roots. */
export const RECORDED: Readonly<Record<string, { kind: 'file'; arg: string } | { kind: 'roots' }>> = {
  write_file: { kind: 'file', arg: 'path' },
  edit_file: { kind: 'file', arg: 'path' },
  run_command: { kind: 'roots' },
};

/** What a call found before it ran: a file's blob (or why it is left out), or its roots' trees. */
export type Inflight =
  | { kind: 'file'; shadow: ShadowRepo; path: string; before: string | null; since: number; skip?: CheckpointSkip['reason'] }
  | { kind: 'roots'; trees: { shadow: ShadowRepo; tree: string; at: number }[] };

/**
 * A change, when its `before` was seen (`since`: a file tool's read, a command's first snapshot)
 * and when its `after` was (`at`: once the file tool wrote, when the command's second snapshot
 * began); `performance.now()`.
 */
export interface Held {
  change: CheckpointChange;
  since: number;
  at: number;
}

/** A call's (or a step's) changes and the files it left out. */
export interface Pending {
  changes: Held[];
  skipped: CheckpointSkip[];
}

export class ChangeCapture {
  constructor(private readonly o: { shadows: Shadows; maxFileBytes: number }) {}

  /** What the call may change, as it is now; undefined when nothing of it is recorded. */
  async capture(how: (typeof RECORDED)[string], args: Record<string, unknown>, ctx: ToolContext): Promise<Inflight | undefined> {
    if (how.kind === 'roots') {
      const trees = await Promise.all(
        ctx.roots.map(async (root) => {
          const shadow = await this.o.shadows.of(root);
          const { tree, at } = await shadow.snapshot(this.o.maxFileBytes);
          return { shadow, tree, at };
        }),
      );
      return { kind: 'roots', trees };
    }
    // Synchronous on purpose: a step's calls run in parallel, and the tools' own file operations
    // (fsyncs among them) fill libuv's few threads; a read queued behind them would hold the call.
    const at = locate(ctx.roots, args[how.arg]);
    if (!at) return undefined; // refused by the tool anyway, or outside every root (full-access): not recorded
    const shadow = await this.o.shadows.of(at.root);
    const rel = shadow.relative(at.realPath);
    if (!rel) return undefined;
    const since = performance.now();
    // An ignored file is recorded too (amended 0059, s56): the tool names one file, read once under
    // the size cap, and what it overwrites (a `.env`, a local config) is the user's own, which no
    // commit of theirs holds. Only commands leave ignored files out (their snapshots would hash
    // whole ignored trees: `node_modules`).
    const before = this.readNow(shadow, at.realPath);
    if (before === undefined) return undefined;
    if (before === 'large') return { kind: 'file', shadow, path: at.realPath, before: null, since, skip: 'too-large' };
    return { kind: 'file', shadow, path: at.realPath, before, since };
  }

  /**
   * The file's blob id now (stored in the background), null when absent, 'large' over the cap,
   * undefined when not a regular file. Read through its folder pinned from the root, no link
   * followed (decision 0097): a command that swapped a folder on the way for a link to outside
   * the workspace makes this throw (PATH_CHANGED, ELOOP: the call goes unrecorded, as the tool
   * refuses too), never store a file outside as the workspace file's content.
   */
  private readNow(shadow: ShadowRepo, file: string): string | null | 'large' | undefined {
    let fd: number;
    try {
      fd = beneathSync(file, shadow.root, (target) => fs.openSync(target, READ_AS_IS));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return null;
      throw e;
    }
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) return undefined;
      if (st.size > this.o.maxFileBytes) return 'large';
      return this.keep(shadow, fs.readFileSync(fd));
    } finally {
      fs.closeSync(fd);
    }
  }

  /** What the call changed, from what it found (`was`) and what is there now (`written`: write_file's own content when it succeeded). */
  async compare(was: Inflight, call: ToolCall, wrote: number, written?: string): Promise<Pending> {
    const out: Pending = { changes: [], skipped: [] };
    if (was.kind === 'file') {
      if (was.skip) {
        out.skipped.push({ path: was.path, reason: was.skip });
        return out;
      }
      // write_file wrote exactly its `content` when it succeeded: no need to read it back.
      const after = written !== undefined ? this.keep(was.shadow, Buffer.from(written, 'utf8')) : await this.read(was.shadow, was.path);
      if (after === 'large') out.skipped.push({ path: was.path, reason: 'too-large' });
      else if (after !== was.before)
        out.changes.push({
          change: recordedChange({ path: was.path, before: was.before, after }, was.shadow.root, call.id, call.name),
          since: was.since,
          at: wrote,
        });
      if (path.basename(was.path) === '.gitignore') was.shadow.forgetIgnores();
      return out;
    }
    for (const { shadow, tree, at } of was.trees) {
      const now = await shadow.snapshot(this.o.maxFileBytes);
      for (const d of await shadow.diff(tree, now.tree)) {
        out.changes.push({ change: recordedChange(d, shadow.root, call.id, call.name), since: at, at: now.at });
        if (path.basename(d.path) === '.gitignore') shadow.forgetIgnores();
      }
      for (const p of now.large) out.skipped.push({ path: p, reason: 'too-large' });
    }
    return out;
  }

  /** The file's blob id (stored), null when absent, 'large' over the cap. */
  private async read(shadow: ShadowRepo, file: string): Promise<string | null | 'large'> {
    let bytes: Buffer;
    try {
      bytes = await readWhole(file, shadow.root);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return null;
      throw e;
    }
    return this.keep(shadow, bytes);
  }

  /** The blob id of these bytes, stored in the background; 'large' over the cap. */
  private keep(shadow: ShadowRepo, bytes: Buffer): string | 'large' {
    return bytes.length > this.o.maxFileBytes ? 'large' : shadow.storeLater(bytes);
  }
}

/**
 * The real path a file tool's path argument names, and the root holding it (the longest): the
 * file's own real path when it exists, else its nearest existing folder's plus the rest.
 * Undefined when it is not a string or lies outside every root.
 */
export function locate(roots: readonly string[], p: unknown): { realPath: string; root: string } | undefined {
  if (typeof p !== 'string' || p === '' || p.includes('\0') || roots.length === 0) return undefined;
  const abs = path.resolve(roots[0], p);
  let real: string | undefined;
  try {
    real = fs.realpathSync.native(abs);
  } catch {
    const rest = [path.basename(abs)];
    for (let dir = path.dirname(abs); real === undefined; ) {
      try {
        real = path.join(fs.realpathSync.native(dir), ...rest);
      } catch {
        const up = path.dirname(dir);
        if (up === dir) return undefined;
        rest.unshift(path.basename(dir));
        dir = up;
      }
    }
  }
  const root = roots.filter((r) => isWithin(real, r)).sort((a, b) => b.length - a.length)[0];
  return root ? { realPath: real, root } : undefined;
}
