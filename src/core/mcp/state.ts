import type { McpSource } from './config';

/**
 * Where one server is (decision 0055): `needs-allow` (a workspace server the user has not
 * allowed yet: never started), `starting`, `ready`, `restarting` (it went away; a new start is
 * due after a backoff), `failed` (the start failed or the restarts ran out; `why` says which).
 */
export type McpPhase = 'needs-allow' | 'starting' | 'ready' | 'restarting' | 'failed' | 'stopped';

export interface McpServerState {
  name: string;
  source: McpSource;
  /** The file it came from, for a person to fix it. */
  file?: string;
  phase: McpPhase;
  /** Why it failed or restarts, in words (secrets redacted). */
  why?: string;
  /**
   * Set while it waits for an allow (`needs-allow`) because what it runs is not what the user
   * allowed under its name before (a pull, an edit, a command's write): a host asking again says so.
   */
  changedSinceAllowed?: true;
  /** Tools it offers now (0 while not ready). */
  toolCount: number;
  /** Restarts since the last good start. */
  restarts: number;
}

/** The error a call of a server's tool gets while the server cannot answer it. */
export function notReadyMessage(tool: string, s: McpServerState, maxRestarts: number): string {
  const where = s.file ? ` (configured in ${s.file})` : '';
  switch (s.phase) {
    case 'needs-allow':
      return `${tool}: MCP server "${s.name}"${where} has not been allowed to start in this workspace. Ask the user to allow it (in the Arbor panel, or \`arbor mcp allow ${s.name}\`).`;
    case 'starting':
      return `${tool}: MCP server "${s.name}" is still starting; try again in a moment.`;
    case 'restarting':
      return `${tool}: MCP server "${s.name}" stopped (${s.why ?? 'no reason given'}) and is being restarted (attempt ${s.restarts} of ${maxRestarts}); try again in a moment.`;
    case 'failed':
      return `${tool}: MCP server "${s.name}" is not running: ${s.why ?? 'it failed'}. Tell the user; they can fix its configuration${where} and reload.`;
    case 'stopped':
      return `${tool}: MCP server "${s.name}" was stopped.`;
    case 'ready':
      return `${tool}: MCP server "${s.name}" does not offer this tool any more.`;
  }
}
