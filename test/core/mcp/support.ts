import { type ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import type { McpServerConfig } from '../../../src/core/mcp/config';
import type { McpManager } from '../../../src/core/mcp/manager';
import { ScopeRegistry } from '../../../src/core/scope/registry';
import type { Tool, ToolContext } from '../../../src/core/tools/tool';
import { repoRoot } from '../../support/repo-root';

// The real reference servers from node_modules (offline): server-everything over stdio, or over
// streamable HTTP through a fixture bound to 127.0.0.1; server-filesystem over stdio.

export const EVERYTHING = path.join(repoRoot(), 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const FILESYSTEM = path.join(repoRoot(), 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');

export function everythingStdio(name = 'everything', env: Record<string, string> = {}, source: McpServerConfig['source'] = 'user'): McpServerConfig {
  return { name, source, transport: { kind: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], env } };
}

export function filesystemStdio(dir: string, name = 'fs'): McpServerConfig {
  return { name, source: 'user', transport: { kind: 'stdio', command: process.execPath, args: [FILESYSTEM, dir], env: {} } };
}

/** The context a tool is called in by these specs (no roots, asking for approvals), `extra` over it. */
export function toolCtx(extra: Partial<ToolContext> = {}): ToolContext {
  return { sessionId: 's', roots: [], sandbox: 'workspace-write', approvalPolicy: 'ask', signal: new AbortController().signal, ...extra };
}

/** A describe's manager specs: a fresh tool registry each spec; the manager a spec put in `m` is closed after it. */
export interface ManagerSpecs {
  readonly tools: ScopeRegistry<Tool>;
  m: McpManager | undefined;
  /** The tool of that name offered now, if any. */
  named(name: string): Tool | undefined;
}

/** Registers the hooks of `ManagerSpecs` in the calling describe. */
export function managerPerTest(): ManagerSpecs {
  let tools = new ScopeRegistry<Tool>();
  const specs: ManagerSpecs = {
    get tools() {
      return tools;
    },
    m: undefined,
    named: (name) => tools.view().find((t) => t.name === name),
  };
  beforeEach(() => {
    tools = new ScopeRegistry<Tool>();
  });
  afterEach(async () => {
    await specs.m?.close();
    specs.m = undefined;
  });
  return specs;
}

const RAW = path.join(repoRoot(), 'test/support/mcp-raw-server.mjs');
/** The env value every `raw` server is configured with (a secret it must never get out). */
export const RAW_SECRET = 'raw-secret-5b2e9d';

/** A hostile raw JSON-RPC server over stdio (test/support/mcp-raw-server.mjs) running `script`. */
export function raw(
  name: string,
  script: { tools?: unknown[]; calls?: Record<string, unknown>; hangList?: boolean; pages?: { count: number; descBytes: number }; laterDeep?: number },
  env: Record<string, string> = {},
): McpServerConfig {
  return { name, source: 'user', transport: { kind: 'stdio', command: process.execPath, args: [RAW, JSON.stringify(script)], env: { RAW_SECRET, ...env } } };
}

export interface HttpFixture {
  url: string;
  stop(): Promise<void>;
}

/** server-everything over streamable HTTP on 127.0.0.1 (a token required when given). */
export async function everythingHttp(token?: string): Promise<HttpFixture> {
  const child: ChildProcess = spawn(process.execPath, [path.join(repoRoot(), 'test/support/mcp-http-server.mjs')], {
    env: { ...process.env, ...(token ? { MCP_TEST_TOKEN: token } : {}) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /port (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`the HTTP fixture exited (${code}) before listening`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export function alive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
