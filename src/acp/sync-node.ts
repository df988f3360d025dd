import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkedRepoKey, nodeKey } from '../core/placement/layout';
import { PlacementError } from '../core/placement/types';
import { git } from '../core/worktree/git';
import { writeIndexTree } from '../core/worktree/index-tree';
import { canWriteObjects, commitBody, writeObjectSync } from '../core/worktree/objects';
import { syncRefused } from './errors';

// The far side's folders of a placement's kept connection (decision 0081) and the checks that
// keep a client's names, and a node's own agent, inside them. A client names a repository by key
// and a node by id; both are checked names resolved here, never paths. A node's folder is its
// agent's workspace, so what is in it is the agent's to change: a node folder swapped for a
// symlink, or a `.git` pointing at another repository, is refused before any git runs there.

export interface NodeDirs {
  /** `--nodes`: each node's worktree, `<nodes>/<node>`. */
  nodes: string;
  /** `--node-stores`: each node's store, `<stores>/<node>`. */
  stores: string;
  /** `--node-repos`: one bare repository per client repository, `<repos>/<key>.git`. */
  repos: string;
}

/** A name the client sent, checked, or BAD_SYNC_NAME. */
export function named<T>(what: string, value: unknown, check: (v: string) => T): T {
  if (typeof value !== 'string') throw syncRefused('BAD_SYNC_NAME', `${what} must be a string, got ${JSON.stringify(value)}`);
  try {
    return check(value);
  } catch (err) {
    throw syncRefused('BAD_SYNC_NAME', err instanceof PlacementError ? err.message.replace(/^[A-Z_]+: /, '') : String(err));
  }
}

export const COMMIT = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

export function commitOf(what: string, value: unknown): string {
  return named(what, value, (v) => {
    if (!COMMIT.test(v)) throw new Error(`${what} must be a full commit id (40 or 64 hex digits), got "${v.slice(0, 80)}"`);
    return v;
  });
}

export const repoDirOf = (dirs: NodeDirs, repo: unknown): string => path.join(dirs.repos, `${named('repo', repo, checkedRepoKey)}.git`);
export const nodeOf = (node: unknown): string => named('node', node, nodeKey);

/** A node's worktree folder, which must be a real folder of its own (not a symlink to anywhere). */
export function nodeFolder(dirs: NodeDirs, node: string): string {
  const wt = path.join(dirs.nodes, node);
  let st: fs.Stats;
  try {
    st = fs.lstatSync(wt);
  } catch {
    throw syncRefused('UNKNOWN_NODE', `node ${node} has no folder here; prepare it first.`);
  }
  if (st.isSymbolicLink() || !st.isDirectory())
    throw syncRefused(
      'UNSAFE_NODE',
      `node ${node}'s folder was replaced by ${st.isSymbolicLink() ? 'a symlink' : 'something not a folder'}; nothing of it is collected.`,
    );
  return wt;
}

/**
 * The node's git folder inside `repoDir` (`worktrees/<name>`), checked both ways: the node's
 * `.git` is a file naming a folder under this repository's `worktrees/`, and that folder's
 * `gitdir` names this node's `.git`. A `.git` the node's agent rewrote (another repository,
 * another node, a real folder) fails one of them.
 */
export function nodeGitDir(repoDir: string, wt: string, node: string): string {
  const refuse = (why: string) => syncRefused('UNSAFE_NODE', `node ${node}'s .git ${why}; nothing of it is collected (prepare the node again).`);
  const dotGit = path.join(wt, '.git');
  let text: string;
  try {
    const st = fs.lstatSync(dotGit);
    if (!st.isFile() || st.size > 4096) throw refuse('is not the file a worktree has');
    text = fs.readFileSync(dotGit, 'utf8');
  } catch (err) {
    if (err instanceof Error && 'data' in err) throw err;
    throw refuse('is missing');
  }
  const m = /^gitdir: (.+)\n?$/.exec(text);
  if (!m) throw refuse('does not say where its git folder is');
  const realRepo = fs.realpathSync(repoDir);
  const gitDir = path.resolve(wt, m[1]!);
  if (path.dirname(gitDir) !== path.join(realRepo, 'worktrees')) throw refuse(`points outside this repository (${gitDir})`);
  let back: string;
  try {
    back = fs.readFileSync(path.join(gitDir, 'gitdir'), 'utf8').trim();
  } catch {
    throw refuse(`points at ${gitDir}, which is no worktree of this repository`);
  }
  if (back !== path.join(fs.realpathSync(wt), '.git')) throw refuse(`points at another node's git folder (${gitDir})`);
  return gitDir;
}

/**
 * The node's worktree as one commit on its HEAD (new, changed and deleted files; ignored ones
 * stay), named by `ref` — the same idempotent step as the push/fetch path's COLLECT_SCRIPT: with
 * nothing changed it is HEAD; with nothing changed since the last collect it is that commit again.
 */
export async function commitNode(
  gitDir: string,
  wt: string,
  ref: string,
  message: string,
  objectsDir?: string,
  /** Run with the commit beside `ref`'s update (it needs the commit, not the ref): the bundle back. */
  beside?: (commit: string) => Promise<unknown>,
): Promise<string> {
  const g = (args: string[], input?: string) =>
    git(['--git-dir', gitDir, '--work-tree', wt, ...args], { cwd: wt, ...(input !== undefined ? { input } : {}) }).then((r) => r.stdout.trim());
  // One git answers the five questions (HEAD, its tree, the last collect, its tree and its parent) while the worktree is added.
  const asked = ['HEAD', 'HEAD^{tree}', ref, `${ref}^{tree}`, `${ref}^`];
  const [said] = await Promise.all([g(['cat-file', '--batch-check=%(objectname)'], `${asked.join('\n')}\n`).then((o) => o.split('\n')), g(['add', '-A'])]);
  // The tree and the commit written here as git writes them (decision 0076's index reader, 0082's
  // commit writer) where the repository's objects are plain; git's write-tree and commit-tree otherwise.
  const inProcess = objectsDir !== undefined && canWriteObjects(undefined);
  const tree = (inProcess ? await writeIndexTree(path.join(gitDir, 'index'), objectsDir) : undefined) ?? (await g(['write-tree']));
  const [head, headTree, prev, prevTree, prevParent] = said.map((l) => (COMMIT.test(l.trim()) ? l.trim() : undefined));
  if (!head) throw syncRefused('SYNC_FAILED', `the worktree ${wt} has no HEAD; prepare the node again.`);
  let c: string;
  if (tree === headTree) c = head;
  else if (prev && tree === prevTree && prevParent === head) c = prev;
  else if (inProcess && canWriteObjects(head)) c = writeObjectSync(objectsDir, 'commit', Buffer.from(commitBody(tree, head, message), 'utf8'));
  else c = await g(['commit-tree', tree, '-p', head, '-m', message]);
  await Promise.all([c !== prev ? g(['update-ref', ref, c]) : undefined, beside?.(c)]);
  return c;
}
