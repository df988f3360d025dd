// mcp.call.vs_direct: one tool call (server-everything's `echo`, over stdio) through Arbor's
// tool — the approval pre-check, the SDK call, the result mapped and redacted — ÷ the same call
// from a bare SDK client on its own server process. mcp.startup.vs_bare: from a new manager to
// its first tool list registered ÷ a bare client's connect + tools/list. Blocks alternate so
// both sides see the same machine load; medians.
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpManager } from '../src/core/mcp/manager';
import { ScopeRegistry } from '../src/core/scope/registry';
import type { Tool, ToolContext } from '../src/core/tools/tool';
import { repoRoot } from '../test/support/repo-root';
import { type BenchOptions, type Figure, type FigureSpec, fmt, median, now, tempDir } from './support';

export const name = 'mcp';

const CALL: FigureSpec = { id: 'mcp.call.vs_direct', op: '<=', target: 1.15 };
const STARTUP: FigureSpec = { id: 'mcp.startup.vs_bare', op: '<=', target: 1.2 };
export const figures: readonly FigureSpec[] = [CALL, STARTUP];

const EVERYTHING = path.join(repoRoot(), 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const server = () => ({
  name: 'everything',
  source: 'user' as const,
  transport: { kind: 'stdio' as const, command: process.execPath, args: [EVERYTHING, 'stdio'], env: {} },
});

async function bareClient(): Promise<{ client: Client; ms: number }> {
  const t0 = now();
  const client = new Client({ name: 'bare', version: '1' }, { capabilities: { roots: { listChanged: false } } });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], env: getDefaultEnvironment(), stderr: 'pipe' }));
  await client.listTools();
  return { client, ms: now() - t0 };
}

async function arborManager(dir: string): Promise<{ m: McpManager; tools: ScopeRegistry<Tool>; ms: number }> {
  const tools = new ScopeRegistry<Tool>();
  const t0 = now();
  const m = new McpManager({ tools, roots: [dir] }, { servers: [server()], allowTools: ['everything'] });
  await m.whenSettled();
  return { m, tools, ms: now() - t0 };
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const dir = tempDir('arbor-bench-mcp-');
  // Five at least: one start swings 350–520 ms here, and a median of three moved the figure across its line.
  const starts = opts.quick ? 5 : 10;
  const startArbor: number[] = [];
  const startBare: number[] = [];
  const startOne = async (side: 'arbor' | 'bare') => {
    if (side === 'arbor') {
      const a = await arborManager(dir);
      startArbor.push(a.ms);
      await a.m.close();
    } else {
      const b = await bareClient();
      startBare.push(b.ms);
      await b.client.close();
    }
  };
  for (let i = 0; i < starts; i++) {
    // Alternate which side starts first (a warm disk cache favours the second).
    for (const side of i % 2 === 0 ? (['arbor', 'bare'] as const) : (['bare', 'arbor'] as const)) await startOne(side);
  }

  const { m, tools } = await arborManager(dir);
  const { client } = await bareClient();
  const echo = tools.view().find((t) => t.name === 'mcp__everything__echo')!;
  const ctx: ToolContext = { sessionId: 'bench', roots: [dir], sandbox: 'workspace-write', approvalPolicy: 'ask', signal: new AbortController().signal };
  const blocks = opts.quick ? 4 : 10;
  const timeArbor = async (i: number) => {
    const t0 = now();
    const r = await echo.execute({ message: `m${i}` }, ctx);
    const ms = now() - t0;
    if (r.isError) throw new Error(r.content);
    return ms;
  };
  const timeDirect = async (i: number) => {
    const t0 = now();
    await client.callTool({ name: 'echo', arguments: { message: `m${i}` } });
    return now() - t0;
  };
  const perBlock = 50;
  const viaArbor: number[] = [];
  const direct: number[] = [];
  try {
    // Warm both paths (JIT, the servers' first calls).
    for (let i = 0; i < 300; i++) {
      await echo.execute({ message: 'warm' }, ctx);
      await client.callTool({ name: 'echo', arguments: { message: 'warm' } });
    }
    // Call by call, alternating which side goes first: neither gets the warmer slot.
    for (let b = 0; b < blocks; b++) {
      for (let i = 0; i < perBlock; i++) {
        const arborFirst = (b + i) % 2 === 0;
        if (arborFirst) viaArbor.push(await timeArbor(i));
        direct.push(await timeDirect(i));
        if (!arborFirst) viaArbor.push(await timeArbor(i));
      }
    }
  } finally {
    await m.close();
    await client.close();
  }
  const callRatio = median(viaArbor) / median(direct);
  const startRatio = median(startArbor) / median(startBare);
  opts.note(`mcp call: through Arbor ${fmt(median(viaArbor))} ms, bare SDK client ${fmt(median(direct))} ms (median of ${viaArbor.length})`);
  opts.note(`mcp startup: Arbor ${fmt(median(startArbor))} ms, bare ${fmt(median(startBare))} ms to the first tool list (median of ${starts})`);
  return [
    { ...CALL, value: callRatio },
    { ...STARTUP, value: startRatio },
  ];
}
