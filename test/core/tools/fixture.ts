// A throwaway workspace on the real file system: <base>/ws is the root, <base>/outside
// a sibling the tools must never write to under workspace-write.
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { callTool } from '../../../src/core/tools/call';
import { sandboxStatus } from '../../../src/core/tools/sandbox/detect';
import type { Tool, ToolContext, ToolResult } from '../../../src/core/tools/tool';

export interface Workspace {
  base: string;
  root: string;
  outside: string;
  /** A context on this workspace: workspace-write, policy never, no port, unless overridden. */
  ctx(over?: Partial<ToolContext>): ToolContext;
  /** Path inside the root. */
  at(rel: string): string;
  write(rel: string, content: string): string;
  read(rel: string): string;
  cleanup(): void;
}

export function makeWorkspace(): Workspace {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-tools-')));
  const root = path.join(base, 'ws');
  const outside = path.join(base, 'outside');
  fs.mkdirSync(root);
  fs.mkdirSync(outside);
  const at = (rel: string): string => path.join(root, rel);
  return {
    base,
    root,
    outside,
    ctx: (over = {}) => ({
      sessionId: 'S1',
      roots: [root],
      sandbox: 'workspace-write',
      approvalPolicy: 'never',
      signal: new AbortController().signal,
      ...over,
    }),
    at,
    write(rel, content) {
      const p = at(rel);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, content);
      return p;
    },
    read: (rel) => fs.readFileSync(at(rel), 'utf8'),
    cleanup: () => fs.rmSync(base, { recursive: true, force: true }),
  };
}

/** Call a tool the way the agent does: raw JSON arguments in, a result out. */
export function call(tool: Tool, args: Record<string, unknown> | string, ctx: ToolContext): Promise<ToolResult> {
  return callTool(tool, typeof args === 'string' ? args : JSON.stringify(args), ctx);
}

/**
 * Everything under `dir` (links not followed) as path → content | 'dir' | 'link:target',
 * minus `skip` subtrees: compare two snapshots to prove nothing appeared or changed.
 */
export function snapshot(dir: string, skip: readonly string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const name of fs.readdirSync(d).sort()) {
      const abs = path.join(d, name);
      if (skip.includes(abs)) continue;
      const rel = path.relative(dir, abs);
      const st = fs.lstatSync(abs);
      if (st.isSymbolicLink()) out[rel] = `link:${fs.readlinkSync(abs)}`;
      else if (st.isDirectory()) {
        out[rel] = 'dir';
        walk(abs);
      } else out[rel] = fs.readFileSync(abs, 'utf8');
    }
  };
  walk(dir);
  return out;
}

/** True while the process exists and is not a zombie (PID 1 in a container may not reap). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return !fs.existsSync('/proc/self'); // no procfs: trust kill(0)
  }
}

export async function waitUntil(cond: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return cond();
}

/** A suite's `before`: skip it, saying why, where no bubblewrap sandbox can start. */
export async function skipWithoutSandbox(ctx: Mocha.Context): Promise<void> {
  const status = await sandboxStatus();
  if (!status.available) {
    console.log(`      (skipped: no bubblewrap sandbox can start here: ${status.reason})`);
    ctx.skip();
  }
}

const TOOLS_SRC = path.join(__dirname, '../../../src/core/tools');

/** Another Arbor process on `root`: one confined command (`command`), in a bubblewrap of its own. */
export function otherProcess(root: string, command: string): ChildProcess {
  const script = `
    const { createRunCommandTool } = require(${JSON.stringify(path.join(TOOLS_SRC, 'run-command'))});
    const { CommandSandbox } = require(${JSON.stringify(path.join(TOOLS_SRC, 'sandbox/command-sandbox'))});
    const { callTool } = require(${JSON.stringify(path.join(TOOLS_SRC, 'call'))});
    const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({ residents: false }) });
    const ctx = { sessionId: 'other', roots: [process.argv[1]], sandbox: 'workspace-write', approvalPolicy: 'never', signal: new AbortController().signal };
    callTool(tool, JSON.stringify({ command: process.argv[2] }), ctx).then((r) => { console.log(r.content); process.exit(0); });
  `;
  return spawn(process.execPath, ['-e', script, root, command], { stdio: ['ignore', 'pipe', 'pipe'] });
}
