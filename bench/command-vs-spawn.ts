// tools.command.vs_spawn: `run_command true` as an agent runs it — through the tool runner,
// with the checkpoint recorder's before/after hooks on (the default: a command's roots are
// snapshotted before and after it, decision 0059) — against a raw `spawn` of `sh -c true` with the
// same stdio, alternated so both see the same load. Bare (full-access): what the OS sandbox adds
// is the figure tools.sandboxed_command.vs_bare. The workspace is a small project (a repository
// with 100 source files and an ignored node_modules), so the snapshots have something to look at.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runToolCalls } from '../src/core/agent/tool-runner';
import { CheckpointRecorder } from '../src/core/checkpoint/recorder';
import { DEFAULT_MAX_FILE_BYTES, Shadows } from '../src/core/checkpoint/shadow';
import { TRUST_SLACK_MS } from '../src/core/checkpoint/stat-index';
import { spawnGroupLeader } from '../src/core/process/spawner';
import { createRunCommandTool } from '../src/core/tools/run-command';
import type { ToolContext } from '../src/core/tools/tool';
import { gitAvailable } from '../src/core/worktree/git-version';
import { type BenchOptions, type Figure, type FigureSpec, fmt, median, missed, now, timeProcess } from './support';

export const VS_SPAWN: FigureSpec = { id: 'tools.command.vs_spawn', op: '<=', target: 1.5 };

const RUNS = 50;
const WARM = 5;
const FOLDERS = 10;
const FILES = 10;

/** Raw: `sh -c true` spawned as run_command spawns it (own process group, stdout and stderr piped), until it closes. */
function rawSpawn(cwd: string): Promise<number> {
  return rawRun('/bin/sh', ['-c', 'true'], cwd);
}

/** Milliseconds until a program spawned as run_command spawns one (`fd3`: bytes on a fourth pipe, bubblewrap's seccomp filter) closes. */
export async function rawRun(file: string, args: readonly string[], cwd: string, fd3?: Buffer): Promise<number> {
  const r = await timeProcess(file, args, { cwd, output: 'drain', ...(fd3 ? { fd3 } : {}) });
  if (r.code !== 0) throw new Error(`${file} exited with ${r.code}`);
  return r.ms;
}

/** Milliseconds until the same program, started through this process's spawner as run_command starts it (decision 0095), closes. */
export async function spawnerRun(file: string, args: readonly string[], cwd: string, fd3?: Buffer): Promise<number> {
  const t0 = now();
  const child = spawnGroupLeader({ file, args: [...args], cwd, env: process.env, ...(fd3 ? { fd3 } : {}) });
  const code = await new Promise<number | null>((resolve, reject) => {
    let exit: number | null = null;
    child.on('error', reject);
    child.on('exit', (c) => (exit = c));
    child.on('close', () => resolve(exit));
    child.stdout.resume();
    child.stderr.resume();
  });
  if (code !== 0) throw new Error(`${file} exited with ${code} (through the spawner)`);
  return now() - t0;
}

export async function commandVsSpawn(opts: BenchOptions, base: string): Promise<Figure> {
  if (!(await gitAvailable())) return missed(VS_SPAWN, 'git is not on PATH, so checkpoints are off here');
  const root = project(path.join(base, 'project'));
  // A workspace's files are mostly older than the slack; ones written just now are snapshotted by git.
  await new Promise((r) => setTimeout(r, TRUST_SLACK_MS + 100));
  const recorder = new CheckpointRecorder({
    shadows: new Shadows(path.join(base, 'store')),
    resident: () => undefined,
    enabled: () => true,
    maxFileBytes: DEFAULT_MAX_FILE_BYTES,
    gitReady: gitAvailable,
  });
  const tool = createRunCommandTool();
  const ctx: ToolContext = { sessionId: 'bench', roots: [root], sandbox: 'full-access', approvalPolicy: 'never', signal: new AbortController().signal };
  const hooks = { beforeToolCall: recorder.before.bind(recorder), afterToolCall: recorder.after.bind(recorder) };
  let call = 0;
  const viaTool = async (withHooks = true): Promise<number> => {
    const t0 = now();
    const [r] = await runToolCalls([{ id: `c${call++}`, name: 'run_command', arguments: '{"command":"true"}' }], [tool], ctx, withHooks ? hooks : {});
    const ms = now() - t0;
    if (r.isError) throw new Error(`run_command true failed: ${r.content}`);
    return ms;
  };
  for (let i = 0; i < WARM; i++) {
    await viaTool();
    await rawSpawn(root);
  }
  const tools: number[] = [];
  const raws: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    tools.push(await viaTool());
    raws.push(await rawSpawn(root));
    bare.push(await viaTool(false));
  }
  const t = median(tools);
  const r = median(raws);
  opts.note(
    `tools: run_command true through the tool runner with checkpoints on, median of ${RUNS}: ${fmt(t)} ms; a raw spawn of sh -c true ${fmt(r)} ms ` +
      `(${FOLDERS * FILES} files; an unchanged root is a stat walk, no git: decisions 0066, 0070); the same without the checkpoint hooks ${fmt(median(bare))} ` +
      `ms (${fmt(median(bare) / r)} × the raw spawn, which forks this large process while run_command's command is started by the spawner, decision 0095; ` +
      `what the tool adds beyond a start is its process group, pipes, exit wait and the two stat walks)`,
  );
  return { ...VS_SPAWN, value: t / r };
}

/** A repository with FOLDERS × FILES source files, a .gitignore and an ignored node_modules; its files older than the checkpoints' trust slack. */
function project(dir: string): string {
  fs.mkdirSync(path.join(dir, '.git', 'hooks'), { recursive: true });
  fs.writeFileSync(path.join(dir, '.git', 'config'), '[core]\n');
  fs.writeFileSync(path.join(dir, '.gitignore'), 'node_modules/\n');
  for (let i = 0; i < FOLDERS; i++) {
    fs.mkdirSync(path.join(dir, 'src', `m${i}`), { recursive: true });
    fs.mkdirSync(path.join(dir, 'node_modules', `p${i}`), { recursive: true });
    for (let j = 0; j < FILES; j++) {
      fs.writeFileSync(path.join(dir, 'src', `m${i}`, `f${j}.ts`), `export const v${j} = ${i};\n`);
      fs.writeFileSync(path.join(dir, 'node_modules', `p${i}`, `f${j}.js`), 'module.exports = 1;\n');
    }
  }
  return fs.realpathSync(dir);
}
