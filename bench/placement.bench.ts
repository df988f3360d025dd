// Placement (issue 26, decision 0074): figures of a placed node, measured side by side.
//
// placement.ssh.vs_local: a one-shot child placed on a transport ÷ the same child run here
// (model latency 200 ms on the scripted server; the child writes a file, so the placed one's
// sync — there and back as git — is in its time), over the real ssh transport to a loopback sshd
// (test/support/sshd.ts, throwaway keys), the placement configured as a deployment writes it. A
// bare `ssh <host> true` is timed beside it: on a host whose login shell does work of its own every
// connection pays it (this machine's root .bashrc runs `pyenv init`, 1.2–2.5 s; the throwaway sshd
// skips it, test/support/sshd.ts), and the line says so.
//
// placement.fanout.efficiency: a workflow fanning 16 agents over two placements; ideal wall time
// (the agents' own turn times laid on the fan-out's slots) ÷ the measured wall time.

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Harness } from '../src/core/harness';
import { OpenAICompatibleClient } from '../src/core/model/openai-client';
import type { PlacedTrace } from '../src/core/placement/placed-provider';
import { placementRow } from '../src/core/placement/row';
import { createTransport } from '../src/core/placement/transports';
import type { PlacementSettings } from '../src/core/placement/types';
import { arborVersion } from '../src/core/version';
import { arborBin } from '../test/support/cli-bundle';
import { localAcpTransport } from '../test/support/local-acp-transport';
import { ModelServer } from '../test/support/model-server';
import { type Sshd, sshdMissing, sshPlacement, startSshd } from '../test/support/sshd';
import { farCpuMs, PhaseLog, treeCpuMs } from './placement-profile';
import { type BenchOptions, type Figure, type FigureSpec, fmt, median, missed, now, tempDir } from './support';

export const name = 'placement';

const VS_LOCAL: FigureSpec = { id: 'placement.ssh.vs_local', op: '<=', target: 1.3 };
const FANOUT: FigureSpec = { id: 'placement.fanout.efficiency', op: '>=', target: 0.8 };
export const figures: readonly FigureSpec[] = [VS_LOCAL, FANOUT];

const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' };
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8' });

/** A repository of 1,000 small files in 20 folders, committed. */
function makeRepo(dir: string): string {
  const ws = path.join(dir, 'ws');
  for (let d = 0; d < 20; d++) {
    fs.mkdirSync(path.join(ws, `pkg${d}`), { recursive: true });
    for (let f = 0; f < 50; f++) fs.writeFileSync(path.join(ws, `pkg${d}`, `f${f}.ts`), `export const v${f} = ${d * 100 + f};\n`.repeat(10));
  }
  git(ws, 'init', '-q', '-b', 'main');
  git(ws, 'add', '-A');
  git(ws, 'commit', '-qm', 'bench');
  return fs.realpathSync(ws);
}

async function world(server: ModelServer, placements: number, sshd?: Sshd, trace?: PlacedTrace) {
  const dir = tempDir('arbor-bench-placed-');
  const ws = makeRepo(dir);
  const ssh = (i: number): PlacementSettings =>
    sshPlacement(sshd!, { name: `p${i}`, remoteDir: path.join(dir, `remote${i}`), arbor: arborBin(), baseUrl: server.baseURL, model: 'bench' });
  // The ssh placements as the harness makes them from its config (features.ts), with the bench's trace.
  const transports = Array.from({ length: placements }, (_, i) =>
    sshd
      ? createTransport(ssh(i), { version: arborVersion() })
      : localAcpTransport({ name: `p${i}`, remoteDir: path.join(dir, `remote${i}`), baseUrl: server.baseURL, model: 'bench', linkSync: true }),
  );
  const h = await Harness.open({
    storeDir: path.join(dir, 'store'),
    workspace: [ws],
    model: { client: new OpenAICompatibleClient({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 }), name: 'bench' },
    sandbox: 'workspace-write',
    approval: 'never',
    releaseDelayMs: 0,
    rows: [placementRow(transports, () => [], trace)],
  });
  return { dir, ws, h, transports };
}

/** One `ssh <host> true`, spawn to exit (a connection's floor on this host). */
function sshLogin(sshd: Sshd): number {
  const t = now();
  execFileSync(
    'ssh',
    [
      '-T',
      '-o',
      'BatchMode=yes',
      '-p',
      String(sshd.port),
      '-i',
      sshd.identityFile,
      ...sshd.sshOptions.flatMap((o) => ['-o', o]),
      `${sshd.user}@${sshd.host}`,
      'true',
    ],
    { stdio: 'ignore' },
  );
  return now() - t;
}

async function vsLocal(opts: BenchOptions, server: ModelServer): Promise<Figure> {
  const missing = sshdMissing();
  if (missing) return missed(VS_LOCAL, `sshd cannot start: ${missing}`);
  const sshd = await startSshd();
  const log = new PhaseLog();
  const { dir, h } = await world(server, 1, sshd, log.trace).catch(async (err) => {
    await sshd.stop();
    throw err;
  });
  try {
    // Each child: a write, then its answer — two model requests of 200 ms each.
    server.setFallback((body) => {
      const last = body.messages.at(-1);
      if (last?.role === 'tool') return { text: 'done', delayMs: 200 };
      return { toolCalls: [{ name: 'write_file', arguments: { path: `out-${body.messages.length}.txt`, content: 'x\n' } }], delayMs: 200 };
    });
    const parent = await h.createSession();
    const child = async (placed: boolean): Promise<number> => {
      const t = now();
      const run = await h.subagents.start(parent, 'spawn', { prompt: 'write a file', ...(placed ? { placement: 'p0' } : { isolation: 'worktree' as const }) });
      const r = await run.result;
      const ms = now() - t;
      if (placed) log.agent(run.id, t, now());
      await run.dispose();
      if (r.stopReason !== 'completed') throw new Error(`a child ended ${r.stopReason}: ${r.error}`);
      return ms;
    };
    await child(true);
    await child(false);
    log.clear();
    const n = opts.quick ? 5 : 12;
    const placed: number[] = [];
    const local: number[] = [];
    for (let i = 0; i < n; i++) {
      placed.push(await child(true));
      local.push(await child(false));
    }
    const logins = [sshLogin(sshd), sshLogin(sshd), sshLogin(sshd)];
    opts.note(
      `placement.ssh.vs_local: over the real ssh transport to a loopback sshd; 1,000-file repository, model latency 200 ms × 2 requests; a bare \`ssh host true\` takes ${fmt(median(logins))} ms here (the login shell's own start-up included; the test sshd's shell skips the user's ~/.bashrc, which costs 1.2–2.5 s a login on this machine), and a placed child's turn opens none of its own: the workspace goes there and back over the placement's kept arbor acp connection (decision 0081), which its check and its children share (decision 0077)`,
    );
    opts.note(
      `placement.ssh.vs_local: placed child ${fmt(median(placed))} ms (a bundle of what the far side lacks + its worktree there — the worktree a finished one-shot child left, reset to the commit, else a 1,000-file checkout (decision 0114) —, session/new and set_mode, prompt, commit + bundle back, worktree moved, the far worktree released — all on the kept connection) ÷ local worktree child ${fmt(median(local))} ms; ${n} each, medians; what is left beside the local child: the worktree there (prepare: reset from the last child's, which the release kept; the local child makes a 1,000-file checkout in its creation), the commit there (\`git add -A\` re-reads all 1,000 files: the checkout's index was written in the same second as its files, so every entry is racily clean), one git process after another on the way back (there: add -A, then update-ref beside pack-objects; here: index-pack --strict, diff-tree, cat-file, one update-ref for the branch and the node's ref), each 15–25 ms on this loaded machine, and the placed child's local worktree entry (\`git worktree add --no-checkout -b\`, three git processes, in "created")`,
    );
    opts.note(`placement.ssh.vs_local: placed child, ${log.line()}`);
    return { ...VS_LOCAL, value: median(placed) / median(local) };
  } finally {
    await h.close();
    await sshd.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const FAN = 16;

/** What creating an empty file costs here (CPU, user + system, and wall), per file: a checkout's floor on this file system. */
function fileCreationCost(dir: string): { cpuUs: number; wallUs: number } {
  const where = fs.mkdtempSync(path.join(dir, 'create-'));
  const N = 1000;
  const c0 = process.cpuUsage();
  const t0 = now();
  for (let i = 0; i < N; i++) fs.closeSync(fs.openSync(path.join(where, `f${i}`), 'wx'));
  const wall = now() - t0;
  const c = process.cpuUsage(c0);
  fs.rmSync(where, { recursive: true, force: true });
  return { cpuUs: (c.user + c.system) / N, wallUs: (wall * 1000) / N };
}

async function fanout(opts: BenchOptions, server: ModelServer): Promise<Figure> {
  const log = new PhaseLog();
  const { dir, h } = await world(server, 2, undefined, log.trace);
  try {
    const LAT = 200;
    server.setFallback(() => ({ text: 'agent done', delayMs: LAT }));
    const parent = await h.createSession();
    const turnMs: number[] = [];
    const one = async (i: number): Promise<void> => {
      const t = now();
      const run = await h.subagents.start(parent, 'spawn', { prompt: `part ${i}`, placement: `p${i % 2}` });
      const r = await run.result;
      turnMs.push(now() - t);
      log.agent(run.id, t, now());
      await run.dispose();
      if (r.stopReason !== 'completed') throw new Error(`agent ${i} ended ${r.stopReason}: ${r.error}`);
    };
    await one(0); // warm
    turnMs.length = 0;
    log.clear();
    const slots = h.subagents.fanout.limit;
    const before = fileCreationCost(dir);
    const cpu0 = treeCpuMs();
    const far0 = farCpuMs();
    const t = now();
    await Promise.all(Array.from({ length: FAN }, (_, i) => one(i)));
    const wall = now() - t;
    const cpu = treeCpuMs() - cpu0;
    const far1 = farCpuMs();
    const fanLine = log.line();
    log.clear();
    // Ideal: one agent alone takes `solo`; FAN of them on `slots` slots take ceil(FAN/slots) of those.
    const solo: number[] = [];
    const soloCpu0 = treeCpuMs();
    for (let i = 0; i < 3; i++) {
      const s = now();
      await one(100 + i);
      solo.push(now() - s);
    }
    const soloCpu = (treeCpuMs() - soloCpu0) / 3;
    const ideal = Math.ceil(FAN / slots) * median(solo);
    const soloLine = log.line();
    // Where one agent's CPU goes, phase by phase: two more agents alone, read at each phase's end (the reading's own cost is in no figure).
    log.clear();
    log.cpu = true;
    for (let i = 0; i < 2; i++) await one(200 + i);
    log.cpu = false;
    const soloCpuLine = log.cpuLine();
    opts.note(
      `placement.fanout.efficiency: CPU of the host and everything below it during the fan-out ${fmt(cpu)} ms over ${fmt(wall)} ms wall (${fmt((100 * cpu) / (wall * 2))}% of 2 cores; ${fmt(cpu / FAN)} ms per agent)`,
    );
    opts.note(
      `placement.fanout.efficiency: of it, the far arbor acp processes' own Node ${fmt((far1.node - far0.node) / FAN)} ms per agent and everything below them (git, the process spawner) ${fmt((far1.below - far0.below) / FAN)} ms per agent; the rest (${fmt((cpu - (far1.node - far0.node) - (far1.below - far0.below)) / FAN)} ms) is the host's Node and its own git`,
    );
    opts.note(`placement.fanout.efficiency: fan-out, ${fanLine}`);
    opts.note(`placement.fanout.efficiency: one agent alone, ${soloLine}`);
    opts.note(
      `placement.fanout.efficiency: one agent alone, CPU ${fmt(soloCpu)} ms, by phase (host and everything below it, each phase since the one before): ${soloCpuLine}`,
    );
    opts.note(
      `placement.fanout.efficiency: transport = the LOCAL test transport ×2 (two placements, the workspace over each kept connection as over ssh); ${FAN} agents, ${slots} slots, model latency ${LAT} ms`,
    );
    opts.note(
      `placement.fanout.efficiency: ideal ${fmt(ideal)} ms (ceil(${FAN}/${slots}) × one agent alone ${fmt(median(solo))} ms) ÷ measured ${fmt(wall)} ms`,
    );
    // The machine's own bound: the fan-out's CPU (host, both far sides, every git) spread over every core, however well it overlaps.
    const cores = os.cpus().length;
    const cpuFloor = cpu / cores;
    const after = fileCreationCost(dir);
    opts.note(
      `placement.fanout.efficiency: this machine's file system: creating a file (open O_CREAT + close, 1,000 in a fresh folder beside the bench's) cost ${fmt(before.cpuUs)} µs of CPU before the fan-out and ${fmt(after.cpuUs)} µs after (on an ordinary local ext4 ~10–30 µs; here it swings between ~20 and ~600 µs from one minute to the next): the far side's 1,000-file checkout of each agent is ${fmt(Math.min(before.cpuUs, after.cpuUs))}–${fmt(Math.max(before.cpuUs, after.cpuUs))} ms of its ${fmt(cpu / FAN)} ms at those rates (the agents alone that give the ideal ran after the fan-out, at the second)`,
    );
    if (cpuFloor > ideal)
      opts.note(
        `placement.fanout.efficiency: CPU-BOUND here: the fan-out used ${fmt(cpu)} ms of CPU (${fmt(cpu / FAN)} per agent: the far side's 1,000-file checkout — its agents run at once, so each needs its own; a finished one-shot child's worktree is reused only by a later child, decision 0114 —, its sync and both ends' Node; the local worktree writes no file until it is reviewed, decision 0093), at least ${fmt(cpuFloor)} ms on ${cores} cores where the ideal is ${fmt(ideal)} ms: at most ${fmt(ideal / cpuFloor)} on this machine, where both placements run on the host's own cores (a real placement's checkout and turn run on its host)`,
      );
    return { ...FANOUT, value: ideal / wall };
  } finally {
    await h.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const server = await ModelServer.start();
  try {
    const out: Figure[] = [];
    for (const [spec, fn] of [
      [VS_LOCAL, vsLocal],
      [FANOUT, fanout],
    ] as const) {
      try {
        out.push(await fn(opts, server));
      } catch (err) {
        out.push(missed(spec, err instanceof Error ? err.message : String(err)));
      }
    }
    return out;
  } finally {
    await server.stop();
  }
}
