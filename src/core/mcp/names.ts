// Tool names on the model wire: `mcp__<server>__<tool>` (Claude Code's convention, so
// permission rules and hook matchers carry over). The wire allows [A-Za-z0-9_-] up to 64
// characters: other characters become `_`, and a name too long is cut and given a short hash
// so two long names stay apart.
import { createHash } from 'node:crypto';

const MAX = 64;

export function mcpToolName(server: string, tool: string): string {
  const clean = tool.replace(/[^A-Za-z0-9_-]/g, '_');
  const full = `mcp__${server}__${clean}`;
  if (full.length <= MAX && clean === tool) return full;
  const hash = createHash('sha256').update(tool).digest('hex').slice(0, 6);
  return `${full.slice(0, MAX - 7)}_${hash}`;
}

/** The server a tool name belongs to (`mcp__srv__x` → `srv`), or undefined for a tool that is not MCP. */
export function serverOfTool(name: string): string | undefined {
  const m = /^mcp__([A-Za-z0-9][A-Za-z0-9_-]*?)__/.exec(name);
  return m?.[1];
}

/** True when a permission entry (`srv`, `mcp__srv`, `mcp__srv__*`, `mcp__srv__tool`) covers this tool of this server. */
export function allowCovers(entry: string, server: string, toolName: string): boolean {
  return entry === server || entry === `mcp__${server}` || entry === `mcp__${server}__*` || entry === toolName;
}
