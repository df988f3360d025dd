import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type CallToolResult, ListRootsRequestSchema, type Tool as McpToolDef, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { type LiveGroup, trackGroup, untrackGroup } from '../process/live-groups';
import { descendantPids } from '../process/proc-stat';
import type { McpServerConfig } from './config';
import { MAX_LISTED } from './limits';

export type { CallToolResult, McpToolDef };

/** What a connection tells its owner: the tool list changed, or the server went away (not by `close`). */
export interface ConnectionEvents {
  toolsChanged(): void;
  closed(why: string): void;
  /** A line the server wrote to stderr (for a failure's "why"); never shown before redaction. */
  stderr?(line: string): void;
}

export interface ConnectOptions {
  /** Workspace folders, answered to the server's `roots/list`. */
  roots: readonly string[];
  /** Give up connecting after this long (ms). */
  timeoutMs: number;
}

const CLIENT_INFO = { name: 'arbor', version: '1' };

/**
 * One live session with one server over the official SDK: stdio (a child process the SDK
 * spawns, tracked in live-groups so a front end that must exit now kills it) or streamable
 * HTTP. The process environment is the SDK's safe default plus the server's own `env`: an
 * Arbor API key in our environment never reaches a server nobody gave it to.
 */
export class McpConnection {
  private closing = false;
  private group: LiveGroup | undefined;

  private constructor(
    readonly client: Client,
    private readonly transport: Transport,
  ) {}

  static async open(server: McpServerConfig, opts: ConnectOptions, events: ConnectionEvents): Promise<McpConnection> {
    const client = new Client(CLIENT_INFO, { capabilities: { roots: { listChanged: false } } });
    const t = server.transport;
    const transport: Transport =
      t.kind === 'stdio'
        ? new StdioClientTransport({
            command: t.command,
            args: t.args,
            env: { ...getDefaultEnvironment(), ...t.env },
            stderr: 'pipe',
            ...(t.cwd ? { cwd: t.cwd } : opts.roots[0] ? { cwd: opts.roots[0] } : {}),
          })
        : new StreamableHTTPClientTransport(new URL(t.url), { requestInit: { headers: t.headers } });
    const conn = new McpConnection(client, transport);
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: opts.roots.map((r) => ({ uri: `file://${r}`, name: r.split('/').pop() || r })),
    }));
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => events.toolsChanged());
    client.onclose = () => {
      conn.untrack();
      if (!conn.closing) events.closed(t.kind === 'stdio' ? 'its process exited' : 'the connection closed');
    };
    if (transport instanceof StdioClientTransport) {
      const err = transport.stderr;
      err?.on('data', (b: Buffer) => {
        for (const line of b.toString('utf8').split('\n')) if (line.trim()) events.stderr?.(line.trim());
      });
    }
    const timer = new Promise<never>((_, reject) => {
      const h = setTimeout(() => reject(new Error(`no answer to initialize within ${opts.timeoutMs} ms`)), opts.timeoutMs);
      h.unref?.();
    });
    try {
      await Promise.race([client.connect(transport), timer]);
    } catch (e) {
      conn.closing = true;
      await client.close().catch(() => undefined);
      conn.untrack();
      throw e;
    }
    if (transport instanceof StdioClientTransport && transport.pid) conn.track(transport.pid);
    return conn;
  }

  /** The stdio server's pid (tests kill it to see a restart). */
  get pid(): number | undefined {
    return this.transport instanceof StdioClientTransport ? (this.transport.pid ?? undefined) : undefined;
  }

  async listTools(): Promise<McpToolDef[]> {
    const out: McpToolDef[] = [];
    let cursor: string | undefined;
    // Bounded: a server that pages forever gets 50 pages, and no page is asked for once more
    // tools were read than could ever be offered (limits.ts).
    for (let page = 0; page < 50 && out.length < MAX_LISTED; page++) {
      const r = await this.client.listTools(cursor ? { cursor } : undefined);
      for (const t of r.tools) out.push(t);
      cursor = r.nextCursor;
      if (!cursor) break;
    }
    return out;
  }

  async callTool(name: string, args: Record<string, unknown>, signal: AbortSignal, onProgress?: (text: string) => void): Promise<CallToolResult> {
    // The SDK leaves its abort listener on the signal it is given; the turn's signal lives for
    // many calls, so each call gets a signal of its own, linked for just as long as the call.
    const own = new AbortController();
    const abort = () => own.abort(signal.reason);
    if (signal.aborted) own.abort(signal.reason);
    else signal.addEventListener('abort', abort, { once: true });
    try {
      return await this.request(name, args, own.signal, onProgress);
    } finally {
      signal.removeEventListener('abort', abort);
    }
  }

  private async request(name: string, args: Record<string, unknown>, signal: AbortSignal, onProgress?: (text: string) => void): Promise<CallToolResult> {
    const r = await this.client.callTool({ name, arguments: args }, undefined, {
      signal,
      // A long call that reports progress keeps going; the clock restarts at each report.
      resetTimeoutOnProgress: true,
      timeout: 10 * 60_000,
      ...(onProgress
        ? {
            onprogress: (p: { progress: number; total?: number; message?: string }) =>
              onProgress(p.message ?? (p.total ? `${p.progress}/${p.total}` : `${p.progress}`)),
          }
        : {}),
    });
    return r as CallToolResult;
  }

  async close(): Promise<void> {
    this.closing = true;
    // The SDK ends a stdio server with SIGTERM, then SIGKILL; its own children (an `npx`
    // wrapper's) may stay: note them first, and end whichever outlived the close.
    const pid = this.pid;
    const family = pid ? [pid, ...descendantPids(pid)] : [];
    await this.client.close().catch(() => undefined);
    for (const p of family) killQuietly(p);
    this.untrack();
  }

  private track(pid: number): void {
    this.group = {
      kill: () => {
        for (const p of [pid, ...descendantPids(pid)]) killQuietly(p);
      },
      groupAlive: () => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      },
    };
    trackGroup(this.group);
  }

  private untrack(): void {
    if (this.group) untrackGroup(this.group);
    this.group = undefined;
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone already
  }
}
