/**
 * Claude Code's tool names and the Arbor tools they mean, so agent files (`tools:`) and hook
 * matchers written for Claude Code work unchanged (issue 23). One table, shared by every reader.
 * A name with several meanings (`Glob`) stands for all of them.
 */
export const CLAUDE_TOOL_ALIASES: Readonly<Record<string, readonly string[]>> = {
  Bash: ['run_command'],
  Write: ['write_file'],
  Edit: ['edit_file'],
  MultiEdit: ['edit_file'],
  Read: ['read_file'],
  Grep: ['search_files'],
  Glob: ['list_files'],
  LS: ['list_files'],
  Task: ['subagent'],
};

/** The Arbor tool names a name stands for: an alias's targets, else the name itself. */
export function arborToolNames(name: string): readonly string[] {
  return Object.hasOwn(CLAUDE_TOOL_ALIASES, name) ? CLAUDE_TOOL_ALIASES[name] : [name];
}

/** Every Arbor name of a list, aliases expanded, duplicates dropped, in first-seen order. */
export function expandToolNames(names: readonly string[]): string[] {
  return [...new Set(names.flatMap((n) => arborToolNames(n)))];
}
