import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PlacementError } from './types';

// Where a placement keeps things on the other side (decision 0072), under its `remoteDir`:
// `repos/<repo key>.git` (one bare repository per local repository, shared by its nodes, so a
// second node sends only what the first did not), `nodes/<node>` (a node's worktree: the cwd its
// `arbor acp` works in) and `stores/<node>` (that arbor's own store: outside the worktree, so it
// never travels back as a change, and kept after cleanup for a reconnect's `session/load`).

export const DEFAULT_REMOTE_DIR = '~/.arbor-placement';

/** A node id as a path segment and ref name: session ids are, anything else is refused. */
export function nodeKey(nodeId: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/.test(nodeId) || nodeId.includes('..') || nodeId.endsWith('.lock'))
    throw new PlacementError(
      'BAD_PLACEMENT',
      `the node id "${nodeId}" cannot name a folder and a git ref; placed nodes need session ids (letters, digits, ".", "_", "-").`,
    );
  return nodeId;
}

/** One key per local repository (its real path), so two repositories never share a bare copy. */
export function repoKey(repo: string): string {
  const real = fs.existsSync(repo) ? fs.realpathSync(repo) : path.resolve(repo);
  return `${
    path
      .basename(real)
      .replace(/[^A-Za-z0-9_-]/g, '')
      .slice(0, 64) || 'repo'
  }-${createHash('sha256').update(real).digest('hex').slice(0, 12)}`;
}

/** A repository key as the far side takes it from a client (`repoKey`'s shape), or a BAD_PLACEMENT error: never a path. */
export function checkedRepoKey(key: string): string {
  if (!/^[A-Za-z0-9_-]{0,100}-[0-9a-f]{12}$/.test(key))
    throw new PlacementError(
      'BAD_PLACEMENT',
      `"${key}" is not a repository key (a name, "-" and 12 hex digits); a client names repositories by key, never by path.`,
    );
  return key;
}

/** The ref a node's base is pushed to on the other side (keeps the commit reachable while the node lives). */
export const baseRef = (nodeId: string) => `refs/arbor/base/${nodeKey(nodeId)}`;
/** The ref a node's collected changes land on, there and at home. */
export const placedRef = (nodeId: string) => `refs/arbor/placed/${nodeKey(nodeId)}`;

/** The store folder next to a node's worktree (`…/nodes/<node>` → `…/stores/<node>`). */
export function storeBeside(cwd: string, nodeId: string): string {
  return path.posix.join(path.posix.dirname(path.posix.dirname(cwd)), 'stores', nodeKey(nodeId));
}
