// The workspace over the kept connection (decision 0081): the ACP extension methods a placement's
// `arbor acp --nodes … --node-stores … --node-repos …` answers, so a placed child's workspace goes
// there and its changes come back on the link its sessions already use — no ssh login of their
// own. Both sides import this file: the client (`link-sync.ts`) and the server (`src/acp/sync.ts`).
// Nothing a client sends is a path: repositories and nodes are checked names the server resolves
// under its own folders; bytes travel as base64 in chunks of at most CHUNK_BYTES.

export const SYNC_METHODS = {
  /** Which of these commits the node repository already holds (made empty on first use). */
  have: '_arbor/sync/have',
  /** One chunk of a bundle on its way there, appended at `offset`. */
  chunk: '_arbor/sync/chunk',
  /** The uploaded bundle into the repository, the node's base ref set, its worktree made at `commit`. */
  prepare: '_arbor/sync/prepare',
  /** The node's worktree committed on its HEAD (idempotent), and a bundle of what the client lacks. */
  collect: '_arbor/sync/collect',
  /** One chunk of a bundle collect made, from `offset`. */
  read: '_arbor/sync/read',
  /** The node is done (a one-shot child, its changes back): its worktree is kept there for the next node to reuse (decision 0114). */
  release: '_arbor/sync/release',
} as const;

export type SyncMethod = keyof typeof SYNC_METHODS;

/** The most a chunk carries (before base64): a JSON-RPC line stays well under any reader's limit. */
export const CHUNK_BYTES = 4 * 1024 * 1024;
/** The largest bundle sent over the link either way; past it the far side refuses with SYNC_TOO_BIG and push/fetch takes over. */
export const MAX_SYNC_BYTES = 256 * 1024 * 1024;

/** A transfer's name (a bundle being uploaded or read back): the client makes it, the server checks it. */
export const TRANSFER_NAME = /^[a-z0-9]{8,64}$/;

export interface HaveParams {
  repo: string;
  commits: string[];
}
export interface HaveResult {
  have: string[];
}

export interface ChunkParams {
  transfer: string;
  offset: number;
  /** base64 */
  data: string;
}
export interface ChunkResult {
  size: number;
}

export interface PrepareParams {
  repo: string;
  node: string;
  commit: string;
  /** The uploaded bundle; absent when the repository already has the commit or the bundle came inline. */
  transfer?: string;
  /** A bundle of at most CHUNK_BYTES, inline (base64): one round trip fewer than a chunk and a prepare. */
  data?: string;
}
export interface PrepareResult {
  /** The node's worktree as the far side sees it (its sessions' cwd). */
  cwd: string;
}

export interface CollectParams {
  repo: string;
  node: string;
  /** The commit the client already has the node's changes on top of (the node's base). */
  base: string;
  message: string;
}
export interface CollectResult {
  /** The node's changes as one commit (the base itself when nothing changed). */
  commit: string;
  /** A bundle of `base..commit` to read, when the commit is not the base and the bundle is past CHUNK_BYTES. */
  bundle?: { transfer: string; size: number };
  /** The bundle itself (base64), when the commit is not the base and it is at most CHUNK_BYTES. */
  data?: string;
}

export interface ReadParams {
  transfer: string;
  offset: number;
}
export interface ReadResult {
  /** base64 */
  data: string;
  /** This was the last chunk (the far side has let the bundle go). */
  eof: boolean;
}

export interface ReleaseParams {
  repo: string;
  node: string;
}
/**
 * Nothing: the answer says the far side took the node back (its sessions are gone; its worktree
 * goes to the next node of the repository once its harness is closed, or is removed). An older far
 * side's `kept` (always true: it answered before it knew) is ignored, as any field a side does not know.
 */
export type ReleaseResult = Record<string, never>;

export interface SyncWire {
  have: [HaveParams, HaveResult];
  chunk: [ChunkParams, ChunkResult];
  prepare: [PrepareParams, PrepareResult];
  collect: [CollectParams, CollectResult];
  read: [ReadParams, ReadResult];
  release: [ReleaseParams, ReleaseResult];
}

/** The codes (in the JSON-RPC error's `data.code`) a sync refusal carries. */
export type SyncErrorCode = 'SYNC_TOO_BIG' | 'BAD_SYNC_NAME' | 'UNSAFE_NODE' | 'UNKNOWN_NODE' | 'SYNC_FAILED';

/** The refusal that sends the client back to push/fetch: the bundle is past MAX_SYNC_BYTES. */
export const SYNC_TOO_BIG: SyncErrorCode = 'SYNC_TOO_BIG';
