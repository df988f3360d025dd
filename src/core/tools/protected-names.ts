// The names that make a path protected (decision 0005, 0026, 0042): what a write needs the
// user's approval for, and what the OS sandbox mounts read-only, at any depth of a root.

/** Directories whose contents configure the editor, git or Arbor itself, with why. */
export const PROTECTED_DIRS: ReadonlyMap<string, string> = new Map([
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
]);
/** The protected directory names, folded (the OS sandbox protects the same ones). */
export const PROTECTED_DIR_NAMES: readonly string[] = [...PROTECTED_DIRS.keys()];
export const WORKSPACE_FILE_SUFFIX = '.code-workspace';
export const WORKSPACE_FILE_REASON = "a '.code-workspace' file holds VS Code workspace settings and tasks; changing it can widen what runs without asking";
export const HOOKS_PATH_REASON =
  "the repository's hooks folder (git config core.hooksPath) or, with husky's '.husky/_', the hook scripts its stubs run: a hook runs code on the next git command";

/**
 * Files, at any depth, that name programs Arbor starts on the host: `.mcp.json` (Claude Code's MCP
 * servers, read at the workspace's top). A command that rewrote one could point an allowed server's
 * name at a program of its own (decision 0112). Missing at a root's top, it gets the folders' stand-in
 * (an empty read-only folder while a command runs: `STAND_IN_NAMES`), since Claude Code in print mode
 * starts the servers of a `.mcp.json` there without asking anyone (amended in s54).
 */
export const PROTECTED_FILES: ReadonlyMap<string, string> = new Map([
  ['.mcp.json', "'.mcp.json' names the MCP servers Arbor and Claude Code start outside the sandbox; a command must not change what they run"],
]);

/** The protected names as a tool description says them (from the tables, so it stays true). */
export const PROTECTED_NAMES_TEXT = [...PROTECTED_DIR_NAMES, ...PROTECTED_FILES.keys(), `*${WORKSPACE_FILE_SUFFIX}`].join(', ');

/** The names a root's top holds while a confined command runs: each missing one an empty read-only stand-in. */
export const STAND_IN_NAMES: readonly string[] = [...PROTECTED_DIR_NAMES, ...PROTECTED_FILES.keys()];

/** Lower case, and trailing dots and spaces dropped (Windows ignores them: `.git.` is `.git`). */
export function foldName(name: string): string {
  return name.toLowerCase().replace(/[. ]+$/, (m) => (m.length === name.length ? m : ''));
}

/** Why an entry named `name` is protected (a protected folder, `.mcp.json` or a workspace file), or undefined. */
export function protectedNameReason(name: string): string | undefined {
  const folded = foldName(name);
  return PROTECTED_DIRS.get(folded) ?? PROTECTED_FILES.get(folded) ?? (folded.endsWith(WORKSPACE_FILE_SUFFIX) ? WORKSPACE_FILE_REASON : undefined);
}
