// Claude Code's tool names and the Arbor tools they stand for, as a plain table: hook matchers
// (and agent files' `tools` lists) written for Claude Code name `Bash`, `Write`, … and must
// reach the same Arbor tools unchanged. A Claude Code name may stand for more than one tool.

/** Claude Code tool name → the Arbor tool names it stands for. */
export const CLAUDE_CODE_TOOL_ALIASES: Readonly<Record<string, readonly string[]>> = {
  Bash: ['run_command'],
  Write: ['write_file'],
  Edit: ['edit_file'],
  MultiEdit: ['edit_file'],
  Read: ['read_file'],
  Grep: ['search_files'],
  Glob: ['list_files', 'glob'],
  LS: ['list_files'],
  Task: ['subagent'],
};

/** The Claude Code names that stand for Arbor tool `tool` (empty when none does), in table order. */
export function claudeCodeNamesOf(tool: string): string[] {
  return Object.entries(CLAUDE_CODE_TOOL_ALIASES)
    .filter(([, arbor]) => arbor.includes(tool))
    .map(([claude]) => claude);
}
