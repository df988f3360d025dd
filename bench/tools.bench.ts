// Tool figures: what run_command costs over a raw spawn (command-vs-spawn.ts), and what the OS
// sandbox adds to a command (decisions 0005, 0042, 0103). A sandboxed `true` (workspace-write:
// the workspace's resident bubblewrap, the protected mounts, the seccomp filter, no network, and
// the command's own namespaces made by arbor-zygote) against a bare one (full-access: the shell
// alone), both through run_command, alternated so that both see the same load; medians of 50
// each. Then the walk for nested protected paths: the same sandboxed `true` in a workspace of 50
// nested repositories against one of 50 plain folders. Beside them, for the record, the same
// command in a bubblewrap of its own (the fallback where no resident can run).
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { warmSpawner } from '../src/core/process/spawner';
import { callTool } from '../src/core/tools/call';
import { MadeRecord } from '../src/core/tools/made-by-commands';
import { createRunCommandTool } from '../src/core/tools/run-command';
import { CommandSandbox } from '../src/core/tools/sandbox/command-sandbox';
import { describeSandboxStatus, sandboxStatus } from '../src/core/tools/sandbox/detect';
import { protectedMounts } from '../src/core/tools/sandbox/protected-mounts';
import { zygotePath } from '../src/core/tools/sandbox/zygote-path';
import type { ToolContext } from '../src/core/tools/tool';
import { commandVsSpawn, rawRun, spawnerRun, VS_SPAWN } from './command-vs-spawn';
import { type BenchOptions, type Figure, type FigureSpec, fmt, median, missed, now, tempDir } from './support';

export const name = 'tools';

const VS_BARE: FigureSpec = { id: 'tools.sandboxed_command.vs_bare', op: '<=', target: 1.5 };
const NESTED: FigureSpec = { id: 'tools.sandboxed_command.nested_repos', op: '<=', target: 1.2 };
export const figures: readonly FigureSpec[] = [VS_SPAWN, VS_BARE, NESTED];

const RUNS = 50;
const WARM = 5;
const REPOS = 50;

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const base = tempDir('arbor-bench-tools-');
  const command = await commandVsSpawn(opts, base);
  const status = await sandboxStatus();
  if (!status.available) {
    const why = `${describeSandboxStatus(status)} (run npm run setup:e2e)`;
    return [command, missed(VS_BARE, why), missed(NESTED, why)];
  }
  const root = workspace(path.join(base, 'ws'), 0);
  const plain = workspace(path.join(base, 'plain'), REPOS, false);
  const nested = workspace(path.join(base, 'nested'), REPOS, true);
  // As a harness runs it: what commands make below the top recorded, with the walk after each command (decision 0111).
  const tool = createRunCommandTool({ sandbox: new CommandSandbox({ made: new MadeRecord(path.join(base, 'made-by-commands.jsonl')) }) });
  const own = createRunCommandTool({ sandbox: new CommandSandbox({ residents: false }) });
  const ctx = (sandbox: ToolContext['sandbox'], dir: string): ToolContext => ({
    sessionId: 'bench',
    roots: [dir],
    sandbox,
    approvalPolicy: 'never',
    signal: new AbortController().signal,
  });
  const once = async (sandbox: ToolContext['sandbox'], dir: string, through = tool): Promise<number> => {
    const t = now();
    const r = await callTool(through, '{"command":"true"}', ctx(sandbox, dir));
    const ms = now() - t;
    if (r.isError) throw new Error(`run_command true failed (${sandbox}, ${dir}): ${r.content}`);
    return ms;
  };
  /** Medians of `a` and `b`, measured alternately. */
  const pair = async (a: () => Promise<number>, b: () => Promise<number>, runs = RUNS): Promise<[number, number]> => {
    for (let i = 0; i < WARM; i++) {
      await a();
      await b();
    }
    const as: number[] = [];
    const bs: number[] = [];
    for (let i = 0; i < runs; i++) {
      as.push(await a());
      bs.push(await b());
    }
    return [median(as), median(bs)];
  };
  const [s, b] = await pair(
    () => once('workspace-write', root),
    () => once('full-access', root),
  );
  const zygote = zygotePath();
  opts.note(
    `tools: run_command true, median of ${RUNS}: sandboxed ${fmt(s)} ms (workspace-write, ${zygote ? "the workspace's resident sandbox" : 'NO ZYGOTE HERE (not built): a bubblewrap per command'}), bare ${fmt(b)} ms (full-access)`,
  );
  opts.note(
    await standInsNote(
      root,
      (await protectedMounts([root])).shadow.map((p) => path.basename(p)),
    ),
  );
  const [o, b2] = await pair(
    () => once('workspace-write', root, own),
    () => once('full-access', root),
    RUNS / 2,
  );
  opts.note(`tools: the fallback, a bubblewrap per command (no resident), median of ${RUNS / 2}: ${fmt(o)} ms vs bare ${fmt(b2)} ms (ratio ${fmt(o / b2)})`);
  const [n, p] = await pair(
    () => once('workspace-write', nested),
    () => once('workspace-write', plain),
  );
  opts.note(
    `tools: sandboxed true, median of ${RUNS}: ${REPOS} nested repositories ${fmt(n)} ms, ${REPOS} plain folders ${fmt(p)} ms ` +
      `(each workspace's mounts are made once, by its resident; a command pays the walk that finds them and its own namespaces' copy of them)`,
  );
  // Wall time on a loaded machine stretches every extra system call; the CPU bubblewrap spends is what the mounts cost.
  // What a command of the nested workspace pays that the plain one does not: the walk that finds its protected paths.
  const walk = async (dir: string): Promise<number> => {
    const t = now();
    await protectedMounts([dir]);
    return now() - t;
  };
  const [wn, wp] = await pair(
    () => walk(nested),
    () => walk(plain),
  );
  opts.note(
    `tools: the walk for protected paths (a command's start pays it), median of ${RUNS}: nested ${fmt(wn)} ms, plain ${fmt(wp)} ms; ` +
      `beyond it the nested command takes ${fmt(n - p - (wn - wp))} ms more (the resident's state key: a stat per mount; its namespaces' copy of ${REPOS * 2} more mounts)`,
  );
  // The fallback's floors: the same bubblewrap command lines, prepared once and spawned directly (no Arbor around them).
  // `start`: how the line is started — spawned by this process (rawRun) or through the spawner (spawnerRun).
  const raw = async (dir: string, start = rawRun): Promise<() => Promise<number>> => {
    const c = await new CommandSandbox().confine('workspace-write', [dir], dir);
    if (!c) throw new Error('no sandbox');
    return () => start(c.file, [...c.args, '--', '/bin/sh', '-c', 'true'], dir, c.fd3);
  };
  const [bw, sh] = await pair(await raw(root), () => rawRun('/bin/sh', ['-c', 'true'], root), RUNS / 2);
  // run_command's programs are started by the spawner (decision 0095), which spares them this
  // process's fork; the floor that compares with the figure is the two lines started the same way.
  const spawned = await warmSpawner();
  const [bwS, shS] = spawned ? await pair(await raw(root, spawnerRun), () => spawnerRun('/bin/sh', ['-c', 'true'], root), RUNS / 2) : [Number.NaN, Number.NaN];
  const floor = spawned ? bwS / shS : bw / sh;
  opts.note(
    `tools: the fallback's floor: a bubblewrap line spawned directly ${fmt(bw)} ms vs sh -c true ${fmt(sh)} ms (ratio ${fmt(bw / sh)}); ` +
      (spawned ? `both through the spawner, as run_command starts them, ${fmt(bwS)} vs ${fmt(shS)} ms (ratio ${fmt(bwS / shS)}): ` : '(no spawner here): ') +
      `bubblewrap's own start (its exec, the namespaces, the mounts, a pid 1 that forks the command) is ${fmt(floor)} × the shell, ` +
      `which is why a workspace's bubblewrap is resident and a command gets only its own namespaces (decision 0103)` +
      (s / b > VS_BARE.target && zygote ? `; MISS with the resident: run_command sandboxed ÷ bare ${fmt(s / b)}` : ''),
  );
  const [nw, pw] = await pair(await raw(nested), await raw(plain), RUNS / 2);
  opts.note(
    `tools: the fallback's nested_repos: the two bubblewrap lines spawned directly, nested ${fmt(nw)} ms vs plain ${fmt(pw)} ms (ratio ${fmt(nw / pw)}): ` +
      `two mounts per nested repository (its .git read-only, its folder pinned) made for every command; a resident makes them once`,
  );
  return [command, { ...VS_BARE, value: s / b }, { ...NESTED, value: n / p }];
}

/**
 * What a command's stand-ins cost the file system here: each missing protected name at the top
 * gets an empty folder for the command's life (decision 0103, amended in s48), made in its
 * namespaces and removed by the host after it, all at once (decision 0129). The same folder
 * operations, timed bare beside the workspace (the removal one after another too), and the mount
 * options of its file system (`discard` makes every rmdir wait).
 */
async function standInsNote(root: string, names: readonly string[]): Promise<string> {
  const scratch = fs.mkdtempSync(path.join(path.dirname(root), 'stand-ins-'));
  const at = names.map((n) => path.join(scratch, n));
  const made: number[] = [];
  const removed: number[] = [];
  const together: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    let t = now();
    for (const p of at) fs.mkdirSync(p);
    made.push(now() - t);
    t = now();
    for (const p of at) fs.rmdirSync(p);
    removed.push(now() - t);
    for (const p of at) fs.mkdirSync(p);
    t = now();
    await Promise.all(at.map((p) => fsp.rmdir(p)));
    together.push(now() - t);
  }
  fs.rmdirSync(scratch);
  const mount = mountOf(root);
  return (
    `tools: the stand-ins: ${names.length} per command here (${names.join(' ')}); the same folders made and removed bare beside the workspace, ` +
    `median of ${RUNS}: mkdir ×${names.length} ${fmt(median(made))} ms, rmdir ×${names.length} one after another ${fmt(median(removed))} ms, ` +
    `all at once (as the sandbox removes them) ${fmt(median(together))} ms` +
    (mount
      ? ` (${mount.type} at ${mount.point}, mounted ${mount.options}${/\bdiscard\b/.test(mount.options) ? ': with discard, each rmdir waits for the freed block to be discarded' : ''})`
      : '')
  );
}

/** The mount holding `p` (the longest mount point above it in this process's mount table): its point, file system type and options. */
function mountOf(p: string): { point: string; type: string; options: string } | undefined {
  let best: { point: string; type: string; options: string } | undefined;
  try {
    for (const line of fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
      const [left, right] = line.split(' - ');
      if (!right) continue;
      const f = left.split(' ');
      const point = f[4];
      if (!(p === point || p.startsWith(point === '/' ? '/' : `${point}/`)) || (best && best.point.length >= point.length)) continue;
      const [type, , superOptions] = right.split(' ');
      best = { point, type, options: [...new Set(`${f[5]},${superOptions}`.split(','))].join(',') };
    }
  } catch {
    return undefined;
  }
  return best;
}

/** A repository with `.git` and `.vscode`, and `folders` packages of a few files each, each a repository of its own when `repos`. */
function workspace(dir: string, folders: number, repos = false): string {
  fs.mkdirSync(path.join(dir, '.git', 'hooks'), { recursive: true });
  fs.writeFileSync(path.join(dir, '.git', 'config'), '[core]\n');
  fs.mkdirSync(path.join(dir, '.vscode'));
  for (let i = 0; i < folders; i++) {
    const pkg = path.join(dir, 'packages', `p${i}`);
    fs.mkdirSync(path.join(pkg, 'src'), { recursive: true });
    fs.writeFileSync(path.join(pkg, 'src', 'index.ts'), 'export {};\n');
    if (repos) {
      fs.mkdirSync(path.join(pkg, '.git', 'hooks'), { recursive: true });
      fs.writeFileSync(path.join(pkg, '.git', 'config'), '[core]\n');
    }
  }
  return fs.realpathSync(dir);
}
