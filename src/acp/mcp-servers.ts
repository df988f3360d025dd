import { type McpConfigRead, parseServer } from '../core/mcp/config';

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
