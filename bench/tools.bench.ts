// Tool figures: what the OS sandbox adds to a command (decision 0005). A sandboxed `true`
// (workspace-write: bubblewrap, the protected mounts, no network) against a bare one
// (full-access: the shell alone), both through run_command, alternated so that both see the
// same load; medians of 50 each.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { callTool } from '../src/core/tools/call';
import { createRunCommandTool } from '../src/core/tools/run-command';
import { describeSandboxStatus, sandboxStatus } from '../src/core/tools/sandbox/detect';
import type { ToolContext } from '../src/core/tools/tool';
import { type BenchOptions, type Figure, type FigureSpec, fmt, median, missed, now, tempDir } from './support';

export const name = 'tools';

const VS_BARE: FigureSpec = { id: 'tools.sandboxed_command.vs_bare', op: '<=', target: 1.5 };
export const figures: readonly FigureSpec[] = [VS_BARE];

const RUNS = 50;
const WARM = 5;

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const status = await sandboxStatus();
  if (!status.available) return [missed(VS_BARE, `${describeSandboxStatus(status)} (run npm run setup:e2e)`)];
  const root = path.join(tempDir('arbor-bench-tools-'), 'ws');
  fs.mkdirSync(path.join(root, '.git', 'hooks'), { recursive: true });
  fs.mkdirSync(path.join(root, '.vscode'));
  const tool = createRunCommandTool();
  const ctx = (sandbox: ToolContext['sandbox']): ToolContext => ({
    sessionId: 'bench',
    roots: [fs.realpathSync(root)],
    sandbox,
    approvalPolicy: 'never',
    signal: new AbortController().signal,
  });
  const once = async (sandbox: ToolContext['sandbox']): Promise<number> => {
    const t = now();
    const r = await callTool(tool, '{"command":"true"}', ctx(sandbox));
    const ms = now() - t;
    if (r.isError) throw new Error(`run_command true failed (${sandbox}): ${r.content}`);
    return ms;
  };
  for (let i = 0; i < WARM; i++) {
    await once('workspace-write');
    await once('full-access');
  }
  const sandboxed: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    sandboxed.push(await once('workspace-write'));
    bare.push(await once('full-access'));
  }
  const s = median(sandboxed);
  const b = median(bare);
  opts.note(`tools: run_command true, median of ${RUNS}: sandboxed ${fmt(s)} ms (bubblewrap, workspace-write), bare ${fmt(b)} ms (full-access)`);
  return [{ ...VS_BARE, value: s / b }];
}
