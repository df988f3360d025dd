import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { describeError } from '../errors';
import { realOr } from '../project/within-root';
import { beneath, isPathChanged } from '../tools/beneath';
import { atomicTempName, syncDir } from '../tools/fsio';
import { lockPathOf, withPathLocks } from '../tools/path-lock';
import { describeCommands, type RunningCommand, withCommandsOut } from '../tools/roots-lock';
import { git, WorktreeError } from './git';
import { isInside } from './names';
import { objectsOnly } from './objects-only';
import { explainReplaced, inApplyOrder, leftoverReason, leftoversIn, removalsOf, removeEmptiedFolder } from './replaced-folders';
import { snapshot } from './snapshot';

const C = fs.constants;

// Apply: a 3-way merge of base → child against the parent's current files, written into the
// parent's working tree — never a commit on the user's branch, never their index (decision
// 0060). The parent's files are snapshotted as a commit whose parent is the base, so the merge
// base of (parent now, child) is the base; `git merge-tree --write-tree` merges in memory. A
// conflict changes nothing and is returned; never auto-resolved. Only paths whose content
// differs between the parent's snapshot and the merge result are written, and each is checked
// to still hold the snapshot's content just before: a file changed meanwhile is a conflict too.
// A folder the child made a file (or the reverse) applies as git's checkout would: its entries
// removed (each checked as any removal), then the emptied folder, then the file
// (`replaced-folders.ts`); anything else the folder holds refuses it.

export interface MergeConflict {
  path: string;
  /** git's words for it ("CONFLICT (content): Merge conflict in a.txt"). */
  message: string;
  /** Not a conflict of content: a protected path the apply writes only when the user says so again (`ApplyOptions.protectedOk`). */
  protected?: true;
}

export type MergeOutcome = { ok: true; files: string[] } | { ok: false; conflicts: MergeConflict[] };

export interface TreeChange {
  status: string;
  oldMode: string;
  newMode: string;
  oldSha: string;
  newSha: string;
  path: string;
}

const ZERO = /^0+$/;

/**
 * Merge `child` (a commit descending from `base`) into the working tree at `repo` (its state now
 * read by `snapshot`'s git, under `bwrap`: the deployment's commands' bubblewrap). `beforeWrite`
 * runs once every target is checked, before the first is written (the apply's intent made
 * durable, decision 0060 amended in s49); a failure there writes nothing.
 */
export async function mergeIntoWorkingTree(
  repo: string,
  base: string,
  child: string,
  excludes: readonly string[],
  bwrap: string,
  beforeWrite?: (top: string, changes: readonly TreeChange[]) => Promise<void>,
  guard?: (rel: string) => MergeConflict | undefined,
): Promise<MergeOutcome> {
  const now = await snapshot(repo, { bwrap, excludes, commit: { message: 'arbor: the workspace before apply', parent: base } });
  // Not in the work tree: its `.gitattributes` would pick a merge driver of the user's config to run unconfined (`objects-only.ts`).
  const merged = await git(['merge-tree', '--write-tree', '--name-only', now.commit!, child], { ...(await objectsOnly(repo)), okCodes: [1] });
  const [treeLine, ...rest] = merged.stdout.split('\n');
  if (merged.code === 1) {
    const since = async (rel: string) =>
      (await git(['diff-tree', '-r', '-z', '--name-only', '--no-renames', base, now.tree, '--', rel], { cwd: repo })).stdout.split('\0').filter(Boolean);
    return { ok: false, conflicts: await explainReplaced(conflictsOf(rest), child, since) };
  }
  const tree = treeLine.trim();
  const changes = await treeChanges(repo, now.tree, tree);
  const top = fs.realpathSync(repo);
  // The file tools' locks of every target, held from the check to the last write: an agent's
  // write_file or edit_file of one of them runs wholly before (the check then sees it) or after.
  // Inside them, no command may run in a root holding a target (roots-lock.ts): one under way
  // refuses the apply, one asked for meanwhile waits for it.
  const targets = changes.map((c) => path.join(top, c.path));
  return withPathLocks(targets.map(lockPathOf), () =>
    withCommandsOut(targets, busyApply, async () => {
      // Nothing is written until every target is checked: any surprise is a conflict, and changes nothing.
      const stale: MergeConflict[] = [];
      const own = excludes.flatMap((ex) => [ex, realOr(ex)]);
      const removed = removalsOf(changes);
      for (const c of changes) {
        const held = guard?.(c.path);
        if (held) {
          stale.push(held);
          continue;
        }
        const why = own.some((ex) => isInside(path.join(top, c.path), ex))
          ? `${c.path} is inside Arbor's own folders (the store or the worktrees): apply never writes there`
          : await staleReason(top, c, removed);
        if (why) stale.push({ path: c.path, message: why });
      }
      if (stale.length) return { ok: false, conflicts: stale };
      await beforeWrite?.(top, changes);
      await writeAll(top, changes);
      return { ok: true, files: changes.map((c) => c.path) };
    }),
  );
}

function busyApply(busy: readonly RunningCommand[]): WorktreeError {
  return new WorktreeError(
    'BUSY',
    `Nothing was applied: a command is running in the workspace the apply would write (${describeCommands(busy)}); written now, the apply would be recorded as that command's change, and could overwrite what it writes unseen. Wait for it to end (or stop that agent), then apply again.`,
  );
}

/**
 * Write every change — the removals first (`inApplyOrder`: the apply's order and its replay's
 * after a crash) — then fsync the folders written (the renames durable). A failure part way
 * (a full disk, a folder made read-only) leaves each file whole, old or new; when some were
 * written already it is PARTIAL, naming them: applying again finishes (the written files now
 * match the child's on both sides of the merge, so only the rest are written).
 */
export async function writeAll(top: string, changes: readonly TreeChange[]): Promise<void> {
  const written: string[] = [];
  const folders = new Set<string>();
  try {
    for (const c of inApplyOrder(changes)) {
      folders.add(path.dirname(path.join(top, c.path)));
      await write(top, c);
      written.push(c.path);
    }
  } catch (e) {
    if (!written.length) throw e;
    throw new WorktreeError(
      'PARTIAL',
      `The apply stopped part way: ${written.length} of ${changes.length} file(s) were written (${written.join(', ')}), the rest left as they were, because ${describeError(e)}. The worktree is still open: fix that, then apply again to write the rest (or review the written files and undo them by hand before discarding).`,
    );
  } finally {
    for (const dir of folders) await syncDir(dir);
  }
}

/** merge-tree's output after the tree line: conflicted paths, a blank line, then its messages. */
function conflictsOf(lines: readonly string[]): MergeConflict[] {
  const blank = lines.indexOf('');
  const paths = [...new Set((blank < 0 ? lines : lines.slice(0, blank)).filter(Boolean))];
  const messages = blank < 0 ? [] : lines.slice(blank + 1).filter((l) => l.startsWith('CONFLICT'));
  return paths.map((p) => ({ path: p, message: messages.find((m) => m.includes(p)) ?? `CONFLICT: ${p} changed in both` }));
}

export async function treeChanges(repo: string, from: string, to: string): Promise<TreeChange[]> {
  const out = (await git(['diff-tree', '-r', '-z', '--no-renames', from, to], { cwd: repo })).stdout.split('\0');
  const changes: TreeChange[] = [];
  for (let i = 0; i + 1 < out.length; i += 2) {
    const head = out[i];
    if (!head.startsWith(':')) break;
    const [oldMode, newMode, oldSha, newSha, status] = head.slice(1).split(' ');
    changes.push({ oldMode, newMode, oldSha, newSha, status, path: out[i + 1] });
  }
  return changes;
}

/**
 * Why writing this change now would lose something (the file changed since the snapshot), or
 * undefined. `removed`: the paths the same apply removes (a folder the child made a file may go
 * when they are all it holds).
 */
export async function staleReason(top: string, c: TreeChange, removed: ReadonlySet<string> = new Set()): Promise<string | undefined> {
  const target = path.join(top, c.path);
  if (!isInside(target, top)) return `${c.path} is outside the workspace`;
  if (c.path.split('/').some(gitRefuses)) return `${c.path} is inside git's own folder (.git): a checkout never writes it, nor does apply`;
  if (c.newMode === '160000' || c.oldMode === '160000') return `${c.path} is a submodule: apply its change by hand`;
  const parent = await realParent(target);
  if (parent && !isInside(parent, top)) return `${c.path} is reached through a symlink that leads outside the workspace`;
  if (await holds(top, c.path, c.oldSha)) return undefined;
  const there = await fsp.lstat(target).then(
    (st) => (st.isDirectory() ? 'folder' : 'entry'),
    () => undefined,
  );
  // A folder where the child has a file (or a link): removed only once the apply's removals empty it.
  if (there === 'folder' && !ZERO.test(c.newSha)) {
    if (!ZERO.test(c.oldSha)) return `${c.path} changed in the workspace since the snapshot (it is a folder now)`;
    const left = await leftoversIn(top, c.path, removed);
    return left.length ? leftoverReason(c.path, left) : undefined;
  }
  if (ZERO.test(c.oldSha)) return `${c.path} was created in the workspace since the snapshot`;
  return there ? `${c.path} changed in the workspace since the snapshot` : `${c.path} was removed from the workspace since the snapshot`;
}

/** The workspace's `rel` holds blob `sha` now (a zero sha: it is absent); a filter (line endings) may make the stored blob differ from the bytes, so both ways. */
export async function holds(top: string, rel: string, sha: string): Promise<boolean> {
  const target = path.join(top, rel);
  const st = await fsp.lstat(target).catch(() => undefined);
  if (ZERO.test(sha)) return !st;
  if (!st || st.isDirectory()) return false;
  const raw = st.isSymbolicLink()
    ? (await git(['hash-object', '--stdin'], { cwd: top, input: await fsp.readlink(target) })).stdout.trim()
    : (await git(['hash-object', '--no-filters', '--', rel], { cwd: top })).stdout.trim();
  if (raw === sha || st.isSymbolicLink()) return raw === sha;
  return (await git(['hash-object', '--', rel], { cwd: top })).stdout.trim() === sha;
}

/**
 * A path component git's own checkout refuses (its `verify_path`): `.git` in any case, with the
 * trailing dots or spaces, or the 8.3 name, another file system reads as `.git`; `.`, `..` and empty.
 * A tree holding one comes only from a far side (decision 0081), never from a snapshot.
 */
function gitRefuses(name: string): boolean {
  return name === '' || name === '.' || name === '..' || /^\.git[. ]*$/i.test(name) || /^git~\d+$/i.test(name);
}

/** The real path of the nearest existing folder above `target`. */
async function realParent(target: string): Promise<string | undefined> {
  for (let d = path.dirname(target); ; d = path.dirname(d)) {
    try {
      return await fsp.realpath(d);
    } catch {
      if (path.dirname(d) === d) return undefined;
    }
  }
}

/**
 * Write one change into the working tree, atomic per file: the bytes go to a temporary file beside
 * the target, are fsynced, then renamed over; a failure removes the temporary file, leaving the
 * target as it was. A file whose git mode does not change keeps its own permission bits (a private
 * 0600 file stays private); a new one, or one whose executable bit changes, takes git's mode. Its
 * folder is reached from the workspace one name at a time with no link followed (`beneath.ts`,
 * decision 0097): a folder swapped for a link since the check above is refused, never followed.
 * The temporary file has a fresh random name and is created exclusively, never through
 * something already there (a link planted at a name it could take).
 */
async function write(top: string, c: TreeChange): Promise<void> {
  const target = path.join(top, c.path);
  const content = ZERO.test(c.newSha) ? undefined : await blob(top, c.newSha);
  try {
    await beneath(target, top, content !== undefined, async (at, folder) => {
      if (!folder) {
        // Where no folder can be pinned (not Linux): the folder's real path, checked once more.
        const real = await fsp.realpath(path.dirname(target)).catch(() => undefined);
        if (real && !isInside(real, top)) throw new WorktreeError('UNSAFE_PATH', `${c.path} leads outside the workspace; nothing more was written.`);
      }
      if (!content) {
        await fsp.rm(at, { force: true });
        return;
      }
      // A folder the child made a file: its entries are removed by now (removals come first).
      if ((await fsp.lstat(at).catch(() => undefined))?.isDirectory()) await removeEmptiedFolder(at, c.path, folder);
      if (c.newMode === '120000') {
        await fsp.rm(at, { force: true });
        await fsp.symlink(content.toString('utf8'), at);
        return;
      }
      const name = atomicTempName(target);
      const tmp = folder ? folder.at(name) : path.join(path.dirname(target), name);
      const fh = await fsp.open(tmp, C.O_WRONLY | C.O_CREAT | C.O_EXCL | (C.O_NOFOLLOW ?? 0), c.newMode === '100755' ? 0o755 : 0o644);
      let renamed = false;
      try {
        try {
          const st = c.oldMode === c.newMode ? await fsp.lstat(at).catch(() => undefined) : undefined;
          if (st?.isFile()) await fh.chmod(st.mode & 0o7777);
          await fh.writeFile(content);
          await fh.sync();
        } finally {
          await fh.close();
        }
        if (c.oldMode === '120000') await fsp.rm(at, { force: true });
        await fsp.rename(tmp, at);
        renamed = true;
      } finally {
        if (!renamed) await fsp.rm(tmp, { force: true }).catch(() => undefined);
      }
    });
  } catch (e) {
    if (isPathChanged(e)) throw new WorktreeError('UNSAFE_PATH', `${c.path}: ${e.message}; nothing more was written.`);
    // A removal whose folder is gone has nothing left to remove.
    if (!content && (e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
}

export async function blob(repo: string, sha: string): Promise<Buffer> {
  return (await git(['cat-file', 'blob', sha], { cwd: repo })).bytes;
}
