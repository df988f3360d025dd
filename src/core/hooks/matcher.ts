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

/** The names a tool is matched under: its own, then Claude Code's for it. */
export function toolNames(tool: string): string[] {
  return [tool, ...claudeCodeNamesOf(tool)];
}
