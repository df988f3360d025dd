// The placement seam (issue 26, DESIGN §11): a node of the tree may run on another host or in a
// container as an ACP agent (`arbor acp`) reached through that transport; the workspace travels
// as git and the log stays at home. This file is the contract between the transports
// (`ssh.ts`, `container.ts`: how to get there, how the workspace goes and comes back) and the
// node that uses one (the provider that runs a placed child, its descriptor and its display).

/** How a placement is reached. `local` is today's in-process child (no transport). */
export type PlacementKind = 'local' | 'ssh' | 'container';

/**
 * One placement as the deployment configures it (VS Code's machine-scoped `arbor.placements`,
 * or the CLI's `--config` file's `placements`): never from a workspace, like remote programs.
 */
export interface PlacementSettings {
  /** Names it for `placement: "<name>"`: letters, digits, `_` and `-`. */
  name: string;
  kind: Exclude<PlacementKind, 'local'>;
  /** ssh: the host as the user's ssh knows it (an alias of ~/.ssh/config works). */
  host?: string;
  /** ssh: login user; absent = the user's ssh config / default. */
  user?: string;
  /** ssh: port; absent = the user's ssh config / 22. */
  port?: number;
  /** ssh: a private key file; absent = the user's ssh agent and config. */
  identityFile?: string;
  /** ssh: extra `-o Key=Value` options (e.g. `UserKnownHostsFile=…`), passed as given. */
  sshOptions?: string[];
  /** ssh: the folder on the remote side for the repository copy and the nodes' worktrees; default `~/.arbor-placement`. */
  remoteDir?: string;
  /** container: `podman` or `docker` (a command on PATH or a path); default `podman`. */
  engine?: string;
  /** container: the image to run; it must carry `arbor` at the pinned version. */
  image?: string;
  /** container: extra `run` arguments (e.g. `--network=host`), passed as given. */
  runArgs?: string[];
  /** The `arbor` command on the other side; default `arbor`. Its `--version` must equal this Arbor's. */
  arbor?: string;
  /** The other side's model endpoint (`--base-url`); absent = its own configuration. */
  baseUrl?: string;
  /** The other side's model (`--model`); absent = its own configuration. */
  model?: string;
  /** Pass this Arbor's API key to the other side (never on a command line). Default false: secrets never travel. */
  passApiKey?: boolean;
  /** Extra environment for the other side's `arbor acp` (never Arbor's own keys). */
  env?: Record<string, string>;
}

/** What a node records of where it ran (its descriptor) and shows on its row. */
export interface PlacementInfo {
  name: string;
  kind: PlacementKind;
  /** `user@host:port` for ssh, the image for a container. */
  where: string;
  /** Round trip of the last check, in ms. */
  rttMs?: number;
}

/** A node's copy of the workspace on the other side. */
export interface PlacedWorkspace {
  /** The node it belongs to. */
  nodeId: string;
  /** The commit the copy started from (the parent's state, uncommitted changes included). */
  base: string;
  /** The folder `arbor acp` works in, as the other side sees it (its `session/new` cwd). */
  cwd: string;
}

/** The process that speaks ACP on stdio for a placed node (spawned like any ACP agent). */
export interface PlacedProcess {
  command: string;
  args: string[];
  /** Local environment for the transport process (e.g. `GIT_SSH_COMMAND`); never Arbor's keys. */
  env: Record<string, string>;
  /**
   * Written to the process's stdin before the ACP stream starts (the API key when
   * `passApiKey`, read by the remote prelude), so no secret is on a command line.
   */
  preamble?: string;
}

/** Codes of the errors a user can meet; each message says what happened and what to do. */
export type PlacementErrorCode =
  | 'UNKNOWN_PLACEMENT'
  | 'BAD_PLACEMENT'
  | 'UNREACHABLE'
  | 'NO_ARBOR'
  | 'VERSION_MISMATCH'
  | 'NO_ENGINE'
  | 'SYNC_FAILED'
  | 'LINK_DROPPED'
  | 'CONTAINER_LEFT';

export class PlacementError extends Error {
  constructor(
    readonly code: PlacementErrorCode,
    message: string,
  ) {
    super(`${code}: ${message}`);
    this.name = 'PlacementError';
  }
}

/**
 * One configured placement, ready to use. Every method honours `signal` (a stopped subtree stops
 * the transport's own processes too).
 */
export interface PlacementTransport {
  readonly settings: PlacementSettings;
  /** Reachable, `arbor` present at this Arbor's version; refuses with a PlacementError otherwise. */
  check(signal?: AbortSignal): Promise<PlacementInfo>;
  /**
   * Bring the workspace there: `commit` (in the local repository `repo`) and its history go over
   * the transport, and a worktree of it is made for the node on the other side.
   */
  prepare(node: { nodeId: string; repo: string; commit: string }, signal?: AbortSignal): Promise<PlacedWorkspace>;
  /** The process for one connection to the node's `arbor acp` (each reconnect spawns a new one). */
  process(ws: PlacedWorkspace): PlacedProcess;
  /**
   * The process of the placement's kept connection (decision 0077): one `arbor acp` serving
   * every node's session — each node's worktree a workspace of its own with its own store
   * (`arbor acp --nodes … --node-stores …`). Absent, each turn of each node starts `process(ws)`.
   */
  connection?(): PlacedProcess;
  /**
   * The kept connection's `arbor acp` also carries the workspace (`--node-repos`, decision 0081):
   * prepare and collect go over `_arbor/sync/*` on it, and `prepare`/`collect` here are the fallback
   * (an older arbor there, a bundle past the link's limit).
   */
  readonly syncOverLink?: boolean;
  /**
   * Bring the changes back: the other side's worktree is committed on top of `ws.base` and that
   * commit is fetched into the local `repo` (under `refs/arbor/placed/<nodeId>`); returns it
   * (equal to `ws.base` when nothing changed).
   */
  collect(ws: PlacedWorkspace, repo: string, signal?: AbortSignal): Promise<{ commit: string }>;
  /** Remove the node's worktree on the other side (its store stays: the log is mirrored at home anyway). */
  cleanup(ws: PlacedWorkspace): Promise<void>;
  /**
   * The node's turn is over and its `process(ws)` exited or was stopped here: whatever of it the
   * engine still runs is ended too (a container whose process ignored the stop outlives its client).
   * Called before its changes are collected. Rejects with CONTAINER_LEFT when something of the turn
   * may still run (the engine could not remove it): its changes are not collected then, and what is
   * left is tried again at the node's next turn and when the placement closes.
   */
  turnOver?(ws: PlacedWorkspace): Promise<void>;
}
