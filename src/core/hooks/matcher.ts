import { claudeCodeNamesOf } from '../tools/aliases';

// Claude Code's matcher rules: '' or '*' matches everything; a plain name or a `|` list of plain
// names matches those names exactly; anything else is a regular expression tested against the
// name (unanchored, case-sensitive). A tool is tried under its Arbor name and every Claude Code
// name that stands for it, so `Bash` and `run_command` both match `run_command`.

const PLAIN = /^[A-Za-z0-9_|]+$/;

/** Whether `matcher` matches any of `names`. */
export function matchesAny(matcher: string, names: readonly string[]): boolean {
  if (matcher === '' || matcher === '*') return true;
  if (PLAIN.test(matcher)) {
    const list = matcher.split('|');
    return names.some((n) => list.includes(n));
  }
  let re: RegExp;
  try {
    re = new RegExp(matcher);
  } catch {
    return false;
  }
  return names.some((n) => re.test(n));
}

/**
 * Arbor tools that start agents as Claude Code's `Task` does, beyond `subagent` (the alias table's
 * `Task`). The alias table is an allow-list's reading (an agent file's `tools: Task` grants
 * `subagent` only: narrow is safe there); a matcher is a hook's reading, where a hook on `Task`
 * that blocks or asks must also see every other way to start one (narrowing is safe here).
 */
const ALSO_TASK: ReadonlySet<string> = new Set(['subagent_fork', 'workflow']);

/** The names a tool is matched under: its own, then Claude Code's for it. */
export function toolNames(tool: string): string[] {
  const claude = claudeCodeNamesOf(tool);
  return [tool, ...claude, ...(ALSO_TASK.has(tool) && !claude.includes('Task') ? ['Task'] : [])];
}
