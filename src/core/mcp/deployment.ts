import type { McpConfigError, McpServerConfig } from './config';

// What a host hands the MCP manager (decision 0055): the servers it configured, the tools the
// user allowed without asking, who may start workspace servers, and the start and restart bounds.

/** Which workspace servers the user allowed to start (remembered per workspace by the host). */
export interface McpTrust {
  isAllowed(server: McpServerConfig): boolean;
  /** Whether a server of this name was allowed here before, with what it ran then (so it changed since). */
  allowedBefore?(name: string): boolean;
  /** Remember the allow (the extension: workspaceState; the CLI: a file in the store folder). */
  allow(server: McpServerConfig): Promise<void>;
}

export interface McpDeployment {
  servers: McpServerConfig[];
  /** Problems reading the config, shown with the servers (a bad entry never stops the others). */
  errors?: McpConfigError[];
  /** Servers or tools the user allowed to be called without asking: `srv`, `mcp__srv`, `mcp__srv__tool`. */
  allowTools?: string[];
  /** Who may start workspace servers; without it none starts (nobody could have allowed it). */
  trust?: McpTrust;
  /** Whether workspace servers may start at all (the extension: a trusted workspace); default true. */
  workspaceTrusted?: boolean;
  /** How long a start may take (ms); default 30000. */
  startTimeoutMs?: number;
  /** Restarts after a server goes away, before it is `failed` for good; default 5. */
  maxRestarts?: number;
  /** The first restart's delay (ms), doubled each time; default 500. */
  backoffMs?: number;
}
