import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describeError } from '../errors';
import type { LinkCall } from '../remote/acp';
import { git } from '../worktree/git';
import { ingestBundle } from './bundle';
import { boundChanges, type ChangeBounds, childChanges } from './change-bounds';
import { nodeKey, placedRef, repoKey } from './layout';
import { CHUNK_BYTES, MAX_SYNC_BYTES, SYNC_METHODS, SYNC_TOO_BIG, type SyncMethod, type SyncWire } from './sync-wire';
import { type PlacedWorkspace, PlacementError } from './types';

// The client of the workspace over the kept connection (decision 0081): a placed node's workspace
// goes there and its changes come back as git bundles on the ACP link its sessions already use,
// so neither takes an ssh login of its own. The same steps as the push/fetch path (0072): the
// far side gets only the commits it lacks, the node's worktree is made at the parent's state,
// and its changes come back as one commit on the base under `refs/arbor/placed/<node>`.

/** How many of the commit's recent ancestors are offered as what the far side may already hold. */
const HAVE_DEPTH = 32;

/** The link cannot carry this sync: the far side is an older arbor without the methods, or the bundle is too big. Push/fetch takes over. */
export class UseGitInstead extends Error {}

function typed(call: LinkCall) {
  return async <M extends SyncMethod>(m: M, params: SyncWire[M][0], signal?: AbortSignal): Promise<SyncWire[M][1]> => {
    signal?.throwIfAborted();
    try {
      return (await call(SYNC_METHODS[m], params)) as SyncWire[M][1];
    } catch (err) {
      throw refusal(err, m);
    }
  };
}

/** A far side's refusal as the error the placed node says (or UseGitInstead when push/fetch can do it). */
function refusal(err: unknown, method: SyncMethod): Error {
  const e = err as { code?: unknown; data?: { code?: unknown; message?: unknown } };
  if (e?.code === -32601) return new UseGitInstead(`the far side's arbor has no ${SYNC_METHODS[method]}`);
  if (e?.data?.code === SYNC_TOO_BIG) return new UseGitInstead(String(e.data.message ?? 'the bundle is too big for the link'));
  const code = e?.data?.code;
  if (typeof e?.data?.message !== 'string') return err instanceof Error ? err : new Error(describeError(err)); // the link itself (it dropped): said by the caller
  const said = `${code && code !== 'SYNC_FAILED' ? `${String(code)}: ` : ''}${e.data.message}`;
  return new PlacementError('SYNC_FAILED', `${SYNC_METHODS[method]} failed there: ${said}`);
}

/** A scratch folder for one bundle, gone after `fn`. */
async function scratch<T>(fn: (file: string) => Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-sync-'));
  try {
    return await fn(path.join(dir, 'b.bundle'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * What a placement's far side was seen to hold, by repository and commit, and the sends of a
 * commit under way (kept across the placement's children; decision 0081). A fan-out's children
 * all start from the parent's state: the first sends it, the others wait for that send and are
 * then prepared without asking — never one bundle of the same commits per child at once.
 */
export class FarCommits {
  private readonly held = new Set<string>();
  private readonly sending = new Map<string, Promise<unknown>>();

  has(key: string): boolean {
    return this.held.has(key);
  }

  /** The send of `key` under way, if any (settles when that child is prepared there, or failed). */
  pending(key: string): Promise<unknown> | undefined {
    return this.sending.get(key);
  }

  /** `send` is the way that gives the far side `key`: others asking meanwhile wait for it. */
  async sendOnce<T>(key: string, send: () => Promise<T>): Promise<T> {
    const p = send();
    this.sending.set(key, p);
    try {
      const out = await p;
      this.held.add(key);
      return out;
    } finally {
      if (this.sending.get(key) === p) this.sending.delete(key);
    }
  }

  /** The far side no longer holds it (its repository made again): the next child sends it again. */
  forget(key: string): void {
    this.held.delete(key);
  }
}

/**
 * The workspace there: the far side says which of the commit's recent ancestors it holds, a
 * bundle of the rest (built in `worktree`, whose HEAD is `commit`) goes in chunks, and `prepare`
 * makes the node's worktree at `commit`.
 */
export async function prepareOverLink(
  call: LinkCall,
  node: { nodeId: string; repo: string; commit: string; worktree: string },
  signal?: AbortSignal,
  /** What this far side holds and is being sent (the placement's, kept across its children). */
  far?: FarCommits,
): Promise<PlacedWorkspace> {
  const req = typed(call);
  const repo = repoKey(node.repo);
  const id = nodeKey(node.nodeId);
  const seen = `${repo} ${node.commit}`;
  // A sibling's send of the same commit under way: it is waited for (its failure is its own; this child then tries the whole way).
  for (let sending = far?.pending(seen); sending; sending = far?.pending(seen)) await sending.catch(() => undefined);
  signal?.throwIfAborted();
  if (far?.has(seen)) {
    try {
      const { cwd } = await req('prepare', { repo, node: id, commit: node.commit }, signal);
      return { nodeId: node.nodeId, base: node.commit, cwd };
    } catch (err) {
      // (The far side lost it — its repository made again — or the prepare failed: the whole way once more says which.)
      if (!(err instanceof PlacementError) || signal?.aborted) throw err;
      far.forget(seen);
    }
  }
  // (No await between the checks above and this: a sibling asking from now on waits for this send.)
  const whole = () => prepareAsking(req, repo, id, node, signal);
  return far ? far.sendOnce(seen, whole) : whole();
}

/** `prepareOverLink`'s whole way: what the far side holds asked first, a bundle of the rest, then prepare. */
async function prepareAsking(
  req: ReturnType<typeof typed>,
  repo: string,
  id: string,
  node: { nodeId: string; repo: string; commit: string; worktree: string },
  signal?: AbortSignal,
): Promise<PlacedWorkspace> {
  const recent = (await git(['rev-list', `--max-count=${HAVE_DEPTH}`, node.commit], { cwd: node.repo })).stdout.split('\n').filter(Boolean);
  const { have } = await req('have', { repo, commits: recent }, signal);
  let sent: { transfer: string } | { data: string } | undefined;
  if (!have.includes(node.commit)) {
    const transfer = randomBytes(12).toString('hex');
    sent = await scratch(async (file) => {
      await git(['bundle', 'create', '--quiet', file, 'HEAD', ...have.map((h) => `^${h}`)], { cwd: node.worktree });
      const size = fs.statSync(file).size;
      if (size > MAX_SYNC_BYTES) throw new UseGitInstead(`the workspace's bundle is ${size} bytes, past ${MAX_SYNC_BYTES}`);
      // A small bundle rides on prepare itself.
      if (size <= CHUNK_BYTES) return { data: fs.readFileSync(file).toString('base64') };
      const fd = fs.openSync(file, 'r');
      try {
        const buf = Buffer.alloc(Math.min(CHUNK_BYTES, size));
        for (let offset = 0; offset < size; ) {
          const n = fs.readSync(fd, buf, 0, buf.length, offset);
          await req('chunk', { transfer, offset, data: buf.subarray(0, n).toString('base64') }, signal);
          offset += n;
        }
      } finally {
        fs.closeSync(fd);
      }
      return { transfer };
    });
  }
  const { cwd } = await req('prepare', { repo, node: id, commit: node.commit, ...sent }, signal);
  return { nodeId: node.nodeId, base: node.commit, cwd };
}

/** A full object id (sha1 or sha256), as git prints it. */
const COMMIT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** A bundle collect made, read in chunks: never past the size it announced, nor past MAX_SYNC_BYTES. */
async function readBundle(req: ReturnType<typeof typed>, b: { transfer: string; size: number }, signal?: AbortSignal): Promise<Buffer> {
  const size = b.size;
  if (!Number.isSafeInteger(size) || size < 0 || size > MAX_SYNC_BYTES)
    throw new PlacementError('SYNC_FAILED', `the far side announced a bundle of ${String(size)} bytes (at most ${MAX_SYNC_BYTES}); nothing was read.`);
  const parts: Buffer[] = [];
  let offset = 0;
  for (let eof = false; !eof; ) {
    const chunk = await req('read', { transfer: b.transfer, offset }, signal);
    const bytes = Buffer.from(typeof chunk?.data === 'string' ? chunk.data : '', 'base64');
    offset += bytes.length;
    if (offset > size) throw new PlacementError('SYNC_FAILED', `the far side sent more than the ${size} bytes it announced; nothing was taken in.`);
    parts.push(bytes);
    eof = chunk?.eof === true || bytes.length === 0;
  }
  return Buffer.concat(parts);
}

/**
 * The changes back: the far side commits the node's worktree on its HEAD (the same commit again
 * when nothing changed since the last collect), the bundle of base..commit is read in chunks and
 * unbundled here, and `refs/arbor/placed/<node>` names it.
 */
export async function collectOverLink(
  call: LinkCall,
  ws: PlacedWorkspace,
  repo: string,
  message: string,
  signal?: AbortSignal,
  /** The node's local worktree and its head: moved to the commit (`moveTo`, else `reset --hard`) beside the ref's update. */
  local?: {
    path: string;
    head: string;
    /**
     * Moves the worktree to `commit`; resolves `true` when it named `also.ref` too (in the same step).
     * `also.checked`: every object a checkout of the commit reads was seen here (no second look needed).
     */
    moveTo?: (commit: string, also: { ref: string; checked: boolean }) => Promise<unknown>;
  },
  /** What the changes may hold (CHANGE_BOUNDS). */
  bounds?: ChangeBounds,
): Promise<{ commit: string; moved: boolean }> {
  const req = typed(call);
  const ref = placedRef(ws.nodeId);
  const r = await req('collect', { repo: repoKey(repo), node: nodeKey(ws.nodeId), base: ws.base, message }, signal);
  // What the far side says is data, never a word for git's command line (`--output=<file>` truncates a file).
  if (typeof r?.commit !== 'string' || !COMMIT_ID.test(r.commit))
    throw new PlacementError(
      'SYNC_FAILED',
      `the far side named no commit (${JSON.stringify(String(r?.commit)).slice(0, 80)}); send the child a message to collect again.`,
    );
  if (typeof r.data === 'string') await ingestBundle({ cwd: repo }, Buffer.from(r.data, 'base64'), { strict: true });
  else if (r.bundle) await ingestBundle({ cwd: repo }, await readBundle(req, r.bundle, signal), { strict: true });
  // What a far side's collect makes — one commit whose one parent is the base — is listed by one git
  // with its parent; anything else is asked the long way (and a commit of another history refused).
  const listed = r.commit === ws.base ? '' : await childChanges(repo, ws.base, r.commit);
  if (listed === undefined) {
    // One commit on the base: a commit of another history (already here, or sent) is not the node's changes.
    const onBase = await git(['merge-base', '--is-ancestor', ws.base, r.commit], { cwd: repo, okCodes: [1] }).catch(() => undefined);
    if (onBase?.code !== 0)
      throw new PlacementError(
        'SYNC_FAILED',
        `the far side's commit ${r.commit.slice(0, 12)} is not on the node's base ${ws.base.slice(0, 12)}; nothing was moved.`,
      );
  }
  // What it would write here is measured before anything names it (a small bundle can hold a huge blob).
  // A child of the base measured so had every object a checkout of it reads looked at (its trees listed, each new blob's header read).
  await boundChanges(repo, ws.base, r.commit, ws.nodeId, bounds, listed);
  // The worktree first: a commit whose objects did not all arrive fails there, and no ref names it
  // (a `moveTo` may name it in the same step: then it says so).
  const move = !!local && local.head !== r.commit;
  let named = false;
  if (move)
    named = local!.moveTo
      ? (await local!.moveTo(r.commit, { ref, checked: listed !== undefined })) === true
      : (await git(['reset', '--quiet', '--hard', r.commit], { cwd: local!.path }), false);
  if (!named) await git(['update-ref', ref, r.commit], { cwd: repo });
  return { commit: r.commit, moved: move };
}

/**
 * The node is done (a one-shot child whose changes are back): the far side keeps its worktree for
 * the next node of the repository (decision 0114). True when the far side let it go (kept or
 * removed there; its answer carries nothing to read, an older far side's `kept` included); false when
 * that side cannot (an older arbor without the method): the placement's cleanup removes it.
 */
export async function releaseOverLink(call: LinkCall, ws: PlacedWorkspace, repo: string, signal?: AbortSignal): Promise<boolean> {
  try {
    await typed(call)('release', { repo: repoKey(repo), node: nodeKey(ws.nodeId) }, signal);
    return true;
  } catch (err) {
    if (err instanceof UseGitInstead) return false;
    throw err;
  }
}
