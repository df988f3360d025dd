import type { McpServerState } from '../../core/mcp/state';
import type { HostToWebview } from '../../protocol';

/** The MCP servers' states as the panel lists them (decision 0055). */
export function mcpServersView(states: readonly McpServerState[]): Extract<HostToWebview, { type: 'mcp/servers' }> {
  const servers = states.map((s) => ({
    name: s.name,
    source: s.source,
    phase: s.phase,
    toolCount: s.toolCount,
    ...(s.why ? { why: s.why } : {}),
  }));
  return { type: 'mcp/servers', servers };
}
