import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type CallToolResult,
  ListRootsRequestSchema,
  type Tool as McpToolDef,
  PaginatedResultSchema,
  ToolListChangedNotificationSchema,
  ToolSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { withBareExplicit } from '../process/git-safe-env';
import { HOST_PROGRAM_RULE, hostLaunch, hostProgram } from '../process/host-program';
import { type LiveGroup, trackGroup, untrackGroup } from '../process/live-groups';
import { descendantPids } from '../process/proc-stat';
import { boundedFetch } from './bounded-fetch';
import type { McpServerConfig } from './config';
import { clip, MAX_DEFINITION_DEPTH, MAX_LISTED, MAX_LISTED_BYTES, MAX_MESSAGE_BYTES, MAX_UNSENT_BYTES, MAX_UNSENT_MESSAGES } from './limits';

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
 * A server's output schemas are not run on the host. The SDK compiles each with Ajv when tools
 * are listed and checks every structured result against it: a schema Ajv cannot compile failed
 * the whole listing, and a `pattern` that backtracks (`^(a|aa)+$`) held the extension host's one
 * thread for minutes on a result of forty characters. Arbor reads a result as text for the model
 * (`result.ts`); a check of its structure against the server's own word guards nothing here.
 */
const NO_OUTPUT_CHECK: jsonSchemaValidator = {
  getValidator:
    <T>(): JsonSchemaValidator<T> =>
    (input: unknown) => ({ valid: true, data: input as T, errorMessage: undefined }),
};

/** A listing: the tools the MCP schema accepts, and a line for each entry it does not. */
export interface ToolListing {
  tools: McpToolDef[];
  invalid: string[];
  /** Why the rest of a long listing was not read, when it was not. */
  cut?: string;
}

/**
 * One live session with one server over the official SDK: stdio (a child process the SDK
 * spawns, tracked in live-groups so a front end that must exit now kills it) or streamable
 * HTTP. The process environment is the SDK's safe default plus the server's own `env`: an
 * Arbor API key in our environment never reaches a server nobody gave it to.
 */
export class McpConnection {
  private closing = false;
  private group: LiveGroup | undefined;
  /** Why the connection was ended from this side for what the server did (a message too big), for the owner's `closed`. */
  private endedFor: string | undefined;

  private constructor(
    readonly client: Client,
    private readonly transport: Transport,
  ) {}

  static async open(server: McpServerConfig, opts: ConnectOptions, events: ConnectionEvents): Promise<McpConnection> {
    const client = new Client(CLIENT_INFO, { capabilities: { roots: { listChanged: false } }, jsonSchemaValidator: NO_OUTPUT_CHECK });
    const t = server.transport;
    const cwd = t.kind === 'stdio' ? (t.cwd ?? opts.roots[0]) : undefined;
    // A server's own git never takes a bare repository a command planted in the workspace (`git-safe-env.ts`).
    const env = t.kind === 'stdio' ? withBareExplicit({ ...getDefaultEnvironment(), ...t.env }) : {};
    const transport: Transport =
      t.kind === 'stdio'
        ? new StdioClientTransport({
            ...stdioLaunch(t.command, t.args, env.PATH),
            env,
            stderr: 'pipe',
            maxBufferSize: MAX_MESSAGE_BYTES,
            ...(cwd ? { cwd } : {}),
          })
        : new StreamableHTTPClientTransport(new URL(t.url), {
            requestInit: { headers: t.headers },
            // One message is bounded (limits.ts); past it the connection ends, and a call waiting on it answers at once.
            fetch: boundedFetch(MAX_MESSAGE_BYTES, (why) => conn.endFor(why)),
          });
    const conn = new McpConnection(client, transport);
    conn.boundUnsent();
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      // A URL, not `file://` + the path: a folder named `a#1` or `a%20b` is that folder to the server.
      roots: opts.roots.map((r) => ({ uri: pathToFileURL(r).href, name: r.split('/').pop() || r })),
    }));
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => events.toolsChanged());
    // The SDK's stdio transport drops a message past its bound, says so here, and ends the process.
    client.onerror = (err) => {
      if (/ReadBuffer exceeded maximum size/.test(err.message))
        conn.endedFor ??= `it sent a message over ${MAX_MESSAGE_BYTES / (1024 * 1024)} MB (the most one message may take)`;
    };
    client.onclose = () => {
      conn.untrack();
      if (!conn.closing) events.closed(conn.endedFor ?? (t.kind === 'stdio' ? 'its process exited' : 'the connection closed'));
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

  /**
   * The server's tools, page by page. Bounded: a server that pages forever gets 50 pages; no page
   * is asked for once more tools, or more bytes of definitions, were read than could ever be
   * offered (limits.ts: pages of 9 MB made the host hold 670 MB for one listing); and the whole
   * listing has `timeoutMs` (a server that answers each page just before the SDK's own minute
   * would hold a start, and `arbor run`'s first turn, for most of an hour). Each entry is checked
   * alone: one tool the MCP schema refuses costs that tool, not the server's whole listing.
   */
  async listTools(timeoutMs: number): Promise<ToolListing> {
    const out: ToolListing = { tools: [], invalid: [] };
    const deadline = Date.now() + timeoutMs;
    let cursor: string | undefined;
    let bytes = 0;
    for (let page = 0; page < 50; page++) {
      const timeout = deadline - Date.now();
      if (timeout <= 0) throw new Error(`tools/list took longer than ${timeoutMs} ms in all`);
      const r = await this.client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, PaginatedResultSchema, { timeout });
      const listed: unknown = (r as { tools?: unknown }).tools;
      if (!Array.isArray(listed)) throw new Error('the server answered tools/list without a "tools" list');
      for (const t of listed) {
        if (out.tools.length + out.invalid.length >= MAX_LISTED) {
          out.cut = `tools past the first ${MAX_LISTED} it listed were not read`;
          return out;
        }
        // Deeper than any schema needs, a definition would overflow the stack of whatever walks it
        // next (its size, its redaction, the request): a listing after `list_changed` threw past
        // the manager, and an unhandled rejection ends `arbor run` and `arbor acp`.
        if (nestedDeeper(t, MAX_DEFINITION_DEPTH)) {
          out.invalid.push(invalidTool(t, [{ path: [], message: `nested deeper than ${MAX_DEFINITION_DEPTH} levels` }]));
          continue;
        }
        bytes += JSON.stringify(t)?.length ?? 0;
        const p = ToolSchema.safeParse(t);
        if (p.success) out.tools.push(p.data as McpToolDef);
        else out.invalid.push(invalidTool(t, p.error.issues));
      }
      cursor = typeof r.nextCursor === 'string' ? r.nextCursor : undefined;
      if (!cursor) return out;
      if (bytes > MAX_LISTED_BYTES) {
        out.cut = `its listing past the first ${Math.round(MAX_LISTED_BYTES / (1024 * 1024))} MB of definitions was not read`;
        return out;
      }
    }
    out.cut = 'its listing past the first 50 pages was not read';
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

  /**
   * What this side sent that the server has not taken yet is bounded. Each send waits until its
   * bytes are taken (stdio: the pipe drained; HTTP: the POST answered), and the SDK answers a
   * server's requests (`roots/list`, `ping`) without waiting for the one before: a server that
   * asked 400,000 times and stopped reading its stdin had every answer kept in the host's memory.
   */
  private boundUnsent(): void {
    const send = this.transport.send.bind(this.transport);
    let bytes = 0;
    let count = 0;
    this.transport.send = async (message, options) => {
      const size = JSON.stringify(message).length;
      if (bytes + size > MAX_UNSENT_BYTES || count >= MAX_UNSENT_MESSAGES) {
        const why = `it does not read what Arbor sends it (${count} messages, ${Math.round(bytes / 1024)} KB waiting)`;
        this.endFor(why);
        throw new Error(`not sent: the MCP server ${why}`);
      }
      bytes += size;
      count++;
      try {
        await send(message, options);
      } finally {
        bytes -= size;
        count--;
      }
    };
  }

  /** End the connection for what the server did: the owner hears `closed(why)`, as if it went away. */
  private endFor(why: string): void {
    this.endedFor ??= why;
    void this.client.close().catch(() => undefined);
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

/** `"name" (inputSchema.type: expected "object")`: a listed entry the MCP schema refused, for the server's state. */
function invalidTool(t: unknown, issues: readonly { path: PropertyKey[]; message: string }[]): string {
  const name = typeof t === 'object' && t !== null && typeof (t as { name?: unknown }).name === 'string' ? (t as { name: string }).name : undefined;
  const [first] = issues;
  const where = first ? `${first.path.length > 0 ? `${first.path.map(String).join('.')}: ` : ''}${first.message}` : 'not a tool definition';
  return `${name === undefined ? 'an entry without a name' : `"${clip(name, 60)}"`} (${clip(where, 120)})`;
}

/** True when `v` nests objects or arrays more than `max` levels deep (walked without recursion). */
function nestedDeeper(v: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[v, 0]];
  while (stack.length > 0) {
    const [x, depth] = stack.pop()!;
    if (typeof x !== 'object' || x === null) continue;
    if (depth >= max) return true;
    for (const y of Object.values(x)) if (typeof y === 'object' && y !== null) stack.push([y, depth + 1]);
  }
  return false;
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone already
  }
}

/**
 * A stdio server's program and arguments: a name is looked up outside the folders a confined
 * command could write, and a `#!/usr/bin/env NAME` script's NAME too (`host-program.ts`, decision
 * 0109; the server runs unconfined, in the workspace). Not found there, the start fails saying so.
 */
function stdioLaunch(command: string, args: readonly string[], pathVar: string | undefined): { command: string; args: string[] } {
  // A path is the user's own choice of file (relative ones from the server's folder, as before).
  if (command.includes('/')) return { command, args: [...args] };
  const found = hostProgram(command, pathVar ?? '');
  if (!found)
    throw new Error(`the command "${command}" was not found on PATH. ${HOST_PROGRAM_RULE}; install it, or give its full path in the server's "command".`);
  const launch = hostLaunch(found, args, pathVar ?? '');
  if (!launch)
    throw new Error(
      `the command "${command}" (${found}) names its interpreter through \`env\`, and that was not found on PATH. ${HOST_PROGRAM_RULE}; install it, or give the server's full command.`,
    );
  return { command: launch.file, args: launch.args };
}
