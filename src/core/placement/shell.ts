import type { PlacementSettings } from './types';

// The few POSIX shell scripts a placement runs on the other side (decisions 0071, 0072). Each
// is a fixed text run as `sh -c SCRIPT arbor ARG…`: every value (paths, commits, the arbor
// command) reaches it as a positional argument, quoted here as one word, so nothing a setting or
// a path holds is ever parsed as shell. No secret is ever an argument: the API key arrives on
// stdin (`PRELUDE_KEY`).

/** One word for a POSIX shell: single-quoted, an inner `'` as `'\''`. */
export function shq(s: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** `sh -c SCRIPT arbor ARG…` as one command line for a remote login shell (ssh joins its arguments with spaces). */
export function shLine(script: string, args: readonly string[]): string {
  return ['sh', '-c', shq(script), 'arbor', ...args.map(shq)].join(' ');
}

/**
 * `check`: `$1 --version`, its exit status on a line of its own, then one line echoed back (the
 * round trip is timed on that echo, over the link already open).
 */
export const CHECK_SCRIPT = ['"$1" --version 2>&1', 'echo "arbor-check-exit=$?"', 'IFS= read -r ping || exit 0', 'echo "$ping"'].join('\n');

/** What every `arbor acp` a placement starts runs first: the key (only with `passApiKey`) and the placement's env. */
function prelude(s: Pick<PlacementSettings, 'passApiKey' | 'env'>): string[] {
  const lines = ['set -e'];
  // The key is the first line of stdin, read by the shell's builtin into the environment of the
  // exec'd arbor: it is never an argument (no `ps` shows it) and never a file.
  if (s.passApiKey) lines.push('IFS= read -r ARBOR_API_KEY', 'export ARBOR_API_KEY');
  for (const [k, v] of Object.entries(s.env ?? {})) lines.push(`export ${k}=${shq(v)}`);
  return lines;
}

/** What `process()` starts: the prelude, then `exec arbor acp`. Arguments: arbor, workspace, store, then extra acp flags. */
export function acpScript(s: Pick<PlacementSettings, 'passApiKey' | 'env'>): string {
  return [...prelude(s), 'arbor=$1', 'ws=$2', 'store=$3', 'shift 3', 'mkdir -p "$store"', 'exec "$arbor" acp --workspace "$ws" --store "$store" "$@"'].join(
    '\n',
  );
}

/**
 * What `connection()` starts (decision 0077): the prelude, then one `arbor acp` for every node of
 * the placement, each node's worktree under the nodes folder a workspace of its own with its store
 * in the stores folder, their repositories in the repos folder (the workspace travels over the
 * connection, decision 0081). Arguments: arbor, nodes folder, stores folder, repos folder, then extra acp flags.
 */
export function acpNodesScript(s: Pick<PlacementSettings, 'passApiKey' | 'env'>): string {
  return [
    ...prelude(s),
    'arbor=$1',
    'nodes=$2',
    'stores=$3',
    'repos=$4',
    'shift 4',
    'mkdir -p "$nodes" "$stores" "$repos"',
    'exec "$arbor" acp --nodes "$nodes" --node-stores "$stores" --node-repos "$repos" "$@"',
  ].join('\n');
}

/** The flags after `acp --workspace … --store …` that a placement's settings give. */
export function acpFlags(s: Pick<PlacementSettings, 'baseUrl' | 'model'>): string[] {
  return [...(s.baseUrl ? ['--base-url', s.baseUrl] : []), ...(s.model ? ['--model', s.model] : [])];
}

/** The identity and switches every git the scripts run uses: Arbor's name, no hooks, no prompt. */
const GIT_ENV = [
  'export GIT_AUTHOR_NAME=Arbor GIT_AUTHOR_EMAIL=arbor@localhost GIT_COMMITTER_NAME=Arbor GIT_COMMITTER_EMAIL=arbor@localhost',
  'export GIT_TERMINAL_PROMPT=0',
  'g() { git -c core.hooksPath=/dev/null -c core.quotePath=false "$@"; }',
];

/**
 * Run as git's `--receive-pack` for `prepare`, so the push and the node's worktree take one
 * connection (one login on the host): make the bare repository on first use, receive the push,
 * then add the node's worktree at the pushed commit. Arguments: repo, worktree, commit (git
 * appends the repository path once more; it is ignored). Its progress goes to stderr: stdout
 * is git's protocol. The last stderr line names the worktree's absolute path.
 */
export const PREPARE_SCRIPT = [
  ...GIT_ENV,
  'repo=$1; wt=$2; commit=$3',
  'mkdir -p "$(dirname "$repo")" "$(dirname "$wt")"',
  // Made once git init has finished (objects/ comes last). Prepares of one fan-out start at once:
  // an init beside another fails on its lock files, so it looks again a moment later.
  'n=0; until [ -d "$repo/objects" ]; do',
  '  e=$(g init -q --bare "$repo" 2>&1) && break; n=$((n+1))',
  '  case "$e" in *.lock*|*"File exists"*) [ $n -lt 10 ] && { sleep 1; continue; } ;; esac',
  '  echo "arbor: could not make the repository $repo: $e" >&2; exit 1',
  'done',
  'g receive-pack "$repo" || exit 1',
  'if [ -e "$wt" ]; then g -C "$repo" worktree remove --force --force "$wt" 2>/dev/null || rm -rf "$wt"; g -C "$repo" worktree prune; fi',
  'g -C "$repo" worktree add --quiet --detach "$wt" "$commit" >&2 || exit 1',
  'echo "arbor-prepared $(cd "$wt" && pwd -P)" >&2',
].join('\n');

/**
 * The node's git folder, checked both ways before any git runs in the node (decision 0081): the
 * node's folder is its agent's workspace, so its `.git` is the agent's to rewrite — to another
 * repository whose config runs a command (`core.fsmonitor`, a filter) when Arbor's git reads the
 * node. Needs `repo` and `wt`; sets `gd` (the node's folder under `$repo/worktrees/`) and `G` (git
 * told that folder and the worktree, never left to find them), or says why not and exits 1.
 */
const NODE_GIT = [
  'unsafe() { echo "arbor-unsafe: the node folder $wt $1; nothing of it is collected (prepare the node again)" >&2; exit 1; }',
  '[ -L "$wt" ] && unsafe "is a symlink"',
  '[ -d "$wt" ] || unsafe "is missing"',
  '{ [ -f "$wt/.git" ] && [ ! -L "$wt/.git" ]; } || unsafe "has a .git that is not the file a worktree has"',
  'rr=$(cd "$repo" && pwd -P) || exit 1',
  'gd=$(sed -n "1s/^gitdir: //p" "$wt/.git")',
  '[ "$(dirname "$gd")" = "$rr/worktrees" ] || unsafe "has a .git pointing outside its repository"',
  'case "$(basename "$gd")" in .|..|"") unsafe "has a .git pointing outside its repository";; esac',
  '[ "$(cat "$gd/gitdir" 2>/dev/null)" = "$(cd "$wt" && pwd -P)/.git" ] || unsafe "has a .git pointing at another worktree"',
  'G() { g --git-dir="$gd" --work-tree="$wt" "$@"; }',
];

/**
 * Run as git's `--upload-pack` for `collect`, so the commit and the fetch take one connection:
 * everything in the node's worktree (`git add -A`: new, changed, deleted; ignored files stay) as
 * one commit on top of its HEAD (the base, or the node's own commits), named by `ref`, then
 * serve it. With nothing changed the ref is HEAD itself; with nothing changed since the last
 * collect it is that commit again (a collect repeated after a reconnect makes no new commit).
 * The node's `.git` is checked first (`NODE_GIT`). Arguments: repo, worktree, ref, message.
 */
export const COLLECT_SCRIPT = [
  ...GIT_ENV,
  'repo=$1; wt=$2; ref=$3; msg=$4',
  ...NODE_GIT,
  'cd "$wt" || exit 1',
  'G add -A >&2 || exit 1',
  'tree=$(G write-tree) && head=$(G rev-parse HEAD) || exit 1',
  'prev=$(G rev-parse -q --verify "$ref^{commit}" 2>/dev/null) || prev=',
  'if [ "$tree" = "$(G rev-parse "$head^{tree}")" ]; then c=$head',
  'elif [ -n "$prev" ] && [ "$tree" = "$(G rev-parse "$prev^{tree}")" ] && [ "$head" = "$(G rev-parse -q --verify "$prev^" 2>/dev/null)" ]; then c=$prev',
  'else c=$(G commit-tree "$tree" -p "$head" -m "$msg") || exit 1; fi',
  'G update-ref "$ref" "$c" || exit 1',
  'echo "arbor-collected $c" >&2',
  'exec git upload-pack "$repo"',
].join('\n');

/**
 * `cleanup`: the node's worktree and its base ref go; its store stays. The repository is found
 * from the worktree's `.git` as text (git never runs in the node: its `.git` may have been
 * rewritten), and only one in the placement's own `repos` folder, next to `nodes`, is touched;
 * otherwise the folder alone goes. What is already gone is skipped. Arguments: worktree, base ref.
 */
export const CLEANUP_SCRIPT = [
  ...GIT_ENV,
  'wt=$1; ref=$2',
  '[ -L "$wt" ] && { rm -f "$wt"; exit 0; }',
  '[ -d "$wt" ] || exit 0',
  'repos=$(cd "$(dirname "$wt")/../repos" 2>/dev/null && pwd -P) || repos=',
  'gd=$(sed -n "1s/^gitdir: //p" "$wt/.git" 2>/dev/null)',
  'repo=$(cd "$gd/../.." 2>/dev/null && pwd -P) || repo=',
  'if [ -n "$repos" ] && [ -n "$repo" ] && [ "$(dirname "$repo")" = "$repos" ]; then',
  '  g -C "$repo" worktree remove --force --force "$wt" 2>/dev/null || rm -rf "$wt"',
  '  g -C "$repo" worktree prune 2>/dev/null',
  '  g -C "$repo" update-ref -d "$ref" 2>/dev/null',
  'else rm -rf "$wt"; fi',
  'exit 0',
].join('\n');

/**
 * A folder on the other side as the remote login shell should see it: `~/x` is relative to the
 * home folder the shell starts in (as git's scp-like paths are), an absolute path stays.
 */
export function remotePath(dir: string): string {
  if (dir === '~') return '.';
  if (dir.startsWith('~/')) return dir.slice(2) || '.';
  return dir;
}
