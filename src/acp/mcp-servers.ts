import { type McpConfigRead, type McpServerConfig, parseServer } from '../core/mcp/config';

// ACP's `session/new` / `session/load` carry `mcpServers` the client wants the agent to use
// (the client's user chose them: they start without a further allow, decision 0055). Stdio:
// `{name, command, args, env: [{name, value}]}`; HTTP: `{type: "http", name, url, headers:
// [{name, value}]}`. SSE is not offered (`mcpCapabilities.sse: false`).

const pairs = (v: unknown): Record<string, string> | unknown =>
  Array.isArray(v) ? Object.fromEntries(v.filter((p) => p && typeof p.name === 'string').map((p) => [p.name, p.value])) : v;

export function acpMcpServers(list: readonly unknown[]): McpConfigRead {
  const out: McpConfigRead = { servers: [], errors: [] };
  for (const raw of list) {
    const o = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    const name = typeof o.name === 'string' ? o.name : '';
    const r = parseServer(
      name,
      { ...o, ...(o.env !== undefined ? { env: pairs(o.env) } : {}), ...(o.headers !== undefined ? { headers: pairs(o.headers) } : {}) },
      'acp',
      'ACP session/new mcpServers',
    );
    if ('message' in r) out.errors.push(r);
    else out.servers.push(r);
  }
  return out;
}

/** How many workspace roots' client servers are remembered (each a few hundred bytes). */
export const MAX_REMEMBERED_ROOTS = 1024;

/**
 * The servers clients gave each workspace root, kept past its close (decision 0037, amended):
 * a root closed to bound memory is opened again by a prompt to a released session, which
 * carries no `mcpServers`; its harness gets back the client's servers it had, so the close is
 * invisible to the session (the same tools as before). Bounded, oldest root forgotten first.
 */
export class ClientServers {
  private readonly byRoot = new Map<string, McpServerConfig[]>();

  /** The servers a client gave `root` (added to what it gave before, by name). */
  given(root: string, servers: readonly McpServerConfig[]): void {
    if (servers.length === 0) return;
    const names = new Set(servers.map((s) => s.name));
    const kept = [...(this.byRoot.get(root) ?? []).filter((s) => !names.has(s.name)), ...servers];
    this.byRoot.delete(root);
    this.byRoot.set(root, kept);
    if (this.byRoot.size > MAX_REMEMBERED_ROOTS) this.byRoot.delete(this.byRoot.keys().next().value!);
  }

  /** What clients gave `root` so far (none when nothing, or forgotten). */
  of(root: string): readonly McpServerConfig[] {
    return this.byRoot.get(root) ?? [];
  }
}
