import { isWithin } from './real-path';

// The names that make a path protected (decision 0005, 0026, 0042): what a write needs the
// user's approval for, and what the OS sandbox mounts read-only, at any depth of a root.

/** Directories whose contents configure the editor, git or Arbor itself, with why. */
const DIR_ROWS = [
  ['.git', "'.git' holds the repository's config and hooks; a hook runs code on the next git command"],
  ['.vscode', "'.vscode' holds VS Code workspace settings and tasks; changing them can widen what runs without asking"],
  ['.arbor', "'.arbor' holds Arbor's own settings and hooks; an agent must not change its own permissions or what runs outside the sandbox"],
  [
    '.claude',
    "'.claude' holds Claude Code settings Arbor can read: hooks run their commands outside the sandbox, agent files set tools; an agent must not change them",
  ],
  [
    '.codex',
    "'.codex' holds Codex's project settings: once the project is trusted in Codex, the MCP servers and hooks they name run outside any sandbox; an agent must not change them",
  ],
  [
    '.gemini',
    "'.gemini' holds Gemini CLI's project settings: in a folder the user trusts, the MCP servers and hooks they name run outside any sandbox when a Gemini session starts; an agent must not change them",
  ],
  [
    '.opencode',
    "'.opencode' holds OpenCode's project plugins, tools and settings: its plugins are JavaScript OpenCode runs outside any sandbox when a session starts; an agent must not change them",
  ],
] as const;
const PROTECTED_DIRS: ReadonlyMap<string, string> = new Map<string, string>(DIR_ROWS);
/** The protected directory names, folded (the OS sandbox protects the same ones). */
export const PROTECTED_DIR_NAMES: readonly string[] = [...PROTECTED_DIRS.keys()];
const WORKSPACE_FILE_SUFFIX = '.code-workspace';
const WORKSPACE_FILE_REASON = "a '.code-workspace' file holds VS Code workspace settings and tasks; changing it can widen what runs without asking";
export const HOOKS_PATH_REASON =
  "the repository's hooks folder (git config core.hooksPath) or, with husky's '.husky/_', the hook scripts its stubs run: a hook runs code on the next git command";

/**
 * Files, at any depth, that name programs started on the host: `.mcp.json` (Claude Code's MCP
 * servers, read at the workspace's top), OpenCode's `opencode.json` / `opencode.jsonc` (its MCP
 * servers and plugins, started with every session, no question asked: decision 0115). A command
 * that rewrote one could point an allowed server's name at a program of its own (decision 0112).
 * Missing at a root's top, each gets the folders' stand-in (an empty read-only folder while a command
 * runs: `standInNames`), since Claude Code in print mode starts the servers of a `.mcp.json` there
 * without asking anyone (amended in s54), and OpenCode those of an `opencode.json`.
 */
const FILE_ROWS = [
  ['.mcp.json', "'.mcp.json' names the MCP servers Arbor and Claude Code start outside the sandbox; a command must not change what they run"],
  ['opencode.json', opencodeReason('opencode.json')],
  ['opencode.jsonc', opencodeReason('opencode.jsonc')],
] as const;
const PROTECTED_FILES: ReadonlyMap<string, string> = new Map<string, string>(FILE_ROWS);
/** A built-in protected name (a folder's or a file's), as the tables spell it: for tables keyed by some of them, checked by the compiler. */
export type BuiltInProtectedName = (typeof DIR_ROWS)[number][0] | (typeof FILE_ROWS)[number][0];

function opencodeReason(name: string): string {
  return `'${name}' names the MCP servers and plugins OpenCode starts outside any sandbox when a session starts; a command must not change what they run`;
}

/** The protected names as a tool description says them (from the tables, so it stays true). */
export const PROTECTED_NAMES_TEXT = [...PROTECTED_DIR_NAMES, ...PROTECTED_FILES.keys(), `*${WORKSPACE_FILE_SUFFIX}`].join(', ');

// Names a deployment adds (decision 0115): an ACP agent's `protects` (its own project
// configuration, which the agent acts on outside every sandbox). Each owner (a harness's remote
// row) adds its list and takes it back when it closes; the names in force are the union, for
// every workspace of this process: protecting a name in one more workspace costs an approval there,
// never a hole. Protected like the folders: at any depth, as any part of a path, a stand-in at the top.
/** Each owner's names as configured (`AGENTS.md`, `.Kiro`: a stand-in is made with that spelling, on a case-sensitive file system), each with why. */
const added = new Map<object, readonly { name: string; reason: string }[]>();
let extra: ReadonlyMap<string, string> = new Map();
let extraGeneration = 0;
/** Every name an owner added, built-in ones too (a built-in name of `STAND_IN_WHEN_CONFIGURED` gets its stand-in then). */
let configured: ReadonlySet<string> = new Set();

/**
 * Built-in names protected wherever they are, whose stand-in at a root's top (when missing) is made
 * only while an agent that reads them is configured (its row adds them: `AGENT_CONFIG_NAMES`, or its
 * `protects`): a stand-in of a name without a dot would show, as an empty folder, in a plain `ls`
 * or a `*.json` glob of every workspace while a command runs (decision 0115, amended on merge).
 */
const STAND_IN_WHEN_CONFIGURED: ReadonlySet<string> = new Set(['opencode.json', 'opencode.jsonc']);

/** The project configuration a known agent program reads and acts on unconfined, by the program's file name (decision 0115). */
export const AGENT_CONFIG_NAMES: Readonly<Record<string, readonly string[]>> = {
  gemini: ['.gemini'],
  opencode: ['.opencode', 'opencode.json', 'opencode.jsonc'],
};

/**
 * Protects `names` (plain names, checked by the caller: `isPlainName`) for `owner` until the
 * returned function is called. `reason(name)` says why, for the approval question.
 */
export function protectNames(owner: object, names: readonly string[], reason: (name: string) => string): () => void {
  added.set(
    owner,
    names.map((name) => ({ name, reason: reason(name) })),
  );
  recompute();
  return () => {
    if (added.delete(owner)) recompute();
  };
}

function recompute(): void {
  const next = new Map<string, string>();
  for (const names of added.values())
    for (const { name, reason } of names) {
      const n = foldName(name);
      if (!builtInReason(n) && !next.has(n)) next.set(n, reason);
    }
  configured = new Set([...added.values()].flat().map(({ name }) => foldName(name)));
  const same = next.size === extra.size && [...next.keys()].every((n) => extra.has(n));
  extra = next;
  if (!same) extraGeneration++;
}

/** Changes whenever the added names do: a cache of what the names matched is stale then (`protected-walk.ts`). */
export function namesGeneration(): number {
  return extraGeneration;
}

/** The names a root's top holds while a confined command runs: each missing one an empty read-only stand-in. */
export function standInNames(): string[] {
  const builtIn = [...PROTECTED_DIR_NAMES, ...PROTECTED_FILES.keys()].filter((n) => !STAND_IN_WHEN_CONFIGURED.has(n) || configured.has(n));
  const own = new Set([...added.values()].flat().flatMap(({ name }) => (extra.has(foldName(name)) ? [name] : [])));
  return [...builtIn, ...own];
}

/** A name a user may add: one path part, not `.`/`..`, no slash, backslash or NUL, at most 100 characters. */
export function isPlainName(name: string): boolean {
  return name.length > 0 && name.length <= 100 && !/[\\/\0]/.test(name) && !/^[. ]+$/.test(name);
}

/** Lower case, and trailing dots and spaces dropped (Windows ignores them: `.git.` is `.git`). */
export function foldName(name: string): string {
  return name.toLowerCase().replace(/[. ]+$/, (m) => (m.length === name.length ? m : ''));
}

/**
 * Where a name stands in a path: the last part (`entry`: a file or a folder, looked at by itself)
 * or a part with more below it (`folder`: only a folder's name can make what is below it protected;
 * a folder named `.mcp.json` or `x.code-workspace` configures nothing).
 */
export type NamePlace = 'entry' | 'folder';

/**
 * The one lookup of the protected names: why a path part named `name` is protected, or undefined.
 * A protected folder or a name an owner added, anywhere; `.mcp.json`, the other protected files and
 * a workspace file only as an `entry`. Case-insensitive, trailing dots and spaces dropped (`foldName`).
 */
export function protectedNameReason(name: string, place: NamePlace = 'entry'): string | undefined {
  const folded = foldName(name);
  return PROTECTED_DIRS.get(folded) ?? extra.get(folded) ?? (place === 'entry' ? fileReason(folded) : undefined);
}

/** Why the built-in name `folded` is protected (a folder or a file), or undefined: what an owner's name may not take over. */
function builtInReason(folded: string): string | undefined {
  return PROTECTED_DIRS.get(folded) ?? fileReason(folded);
}

function fileReason(folded: string): string | undefined {
  return PROTECTED_FILES.get(folded) ?? (folded.endsWith(WORKSPACE_FILE_SUFFIX) ? WORKSPACE_FILE_REASON : undefined);
}

/**
 * Whether what a home dot entry links to (`~/.bashrc -> dotfiles/bashrc`, real path `target`) is
 * protected like the entry (decision 0123, amended s59): inside a root, and neither a root itself
 * nor the home folder or a folder above it (either would take the whole workspace). The one rule
 * for the sandbox (`sandbox/protected-mounts.ts`) and the file tools (`protected-paths.ts`).
 */
export function dotLinkTargetProtected(target: string, home: string, roots: readonly string[]): boolean {
  return roots.some((r) => isWithin(target, r)) && !roots.includes(target) && !isWithin(home, target);
}
