import type { FeatureRow } from '../feature/rows';
import type { McpDeployment } from './deployment';
import { McpManager } from './manager';

/**
 * The MCP row: a manager whose servers' tools join the global tool scope, closed with the
 * harness (every server process ends before the store does). Roots are the workspace folders.
 */
export function mcpRow(deployment: McpDeployment | undefined, roots: readonly string[]): FeatureRow<McpManager> {
  return {
    name: 'mcp',
    wire({ tools }) {
      const manager = new McpManager({ tools, roots }, deployment ?? { servers: [] });
      return { service: manager, hooks: { close: () => manager.close(), toolsStarting: (signal) => manager.firstStarts(signal) } };
    },
  };
}
