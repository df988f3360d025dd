import type { McpToolDef, ToolListing } from './connection';
import { offerable } from './limits';
import { mcpToolName } from './names';
import { redactDeep } from './secrets';

// One server's tool listing made its registered tools (decision 0055): what is offered within
// the bounds (`offerable`), shown with the server's secrets redacted, registered as
// `mcp__<server>__<tool>` when new or changed, unregistered when gone; and what was left out, said.

/** A tool registered for a server: its definition as shown, and how to take it back. */
export interface RegisteredTool {
  def: McpToolDef;
  unregister: () => void;
}

export interface ToolSyncDeps {
  /** True when `name` is registered by another server, or is a tool that is not this server's. */
  heldElsewhere(name: string): boolean;
  /** Register the tool `name` (the server's `def`, as shown); returns its unregister. */
  register(name: string, def: McpToolDef): () => void;
}

/**
 * Register what is new in `listing`, drop what is gone from `tools` (updated in place); bounded
 * in count and size (`offerable`). Returns notes on what was left out (not yet redacted).
 */
export function syncTools(server: string, listing: ToolListing, secrets: string[], tools: Map<string, RegisteredTool>, deps: ToolSyncDeps): string[] {
  // What the server says of its tools reaches the model and the log: its secrets redacted there too.
  const { offered, leftOut } = offerable(listing.tools, secrets);
  const notes = [...leftOut];
  const { invalid, cut } = listing;
  if (cut) notes.push(cut);
  if (invalid.length > 0)
    notes.push(
      `${invalid.length === 1 ? 'a tool is' : `${invalid.length} tools are`} not offered: not valid MCP: ${invalid.slice(0, 3).join(', ')}${invalid.length > 3 ? ` and ${invalid.length - 3} more` : ''}`,
    );
  const want = new Map(offered.map((d) => [mcpToolName(server, d.name), shown(d, secrets)]));
  for (const [name, t] of tools) {
    if (want.has(name)) continue;
    t.unregister();
    tools.delete(name);
  }
  for (const [name, def] of want) {
    const old = tools.get(name);
    if (old && JSON.stringify(old.def) === JSON.stringify(def)) continue;
    // A name another server (or Arbor) holds is never taken over: the first holder keeps it.
    if (!old && deps.heldElsewhere(name)) {
      notes.push(`tool "${def.name}" is not offered: its name ${name} is taken`);
      continue;
    }
    old?.unregister();
    const unregister = deps.register(name, def);
    tools.set(name, { def, unregister });
  }
  return notes;
}

/** A tool definition as it may be shown (to the model, in the log): the server's secrets redacted; the name kept for the call. */
function shown(d: McpToolDef, secrets: string[]): McpToolDef {
  const { name, ...rest } = d;
  return { ...redactDeep(rest, secrets), name };
}
