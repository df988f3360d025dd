// Where a placed child's time goes (issue 26, decision 0077): the wall time of each phase of its
// turns (the placed provider's trace) and the CPU the host and everything it started used, so a
// bench line can say whether a slow fan-out is work (CPU) or waiting (queues, locks, latency).

import * as fs from 'node:fs';
import type { PlacedPhase, PlacedTrace } from '../src/core/placement/placed-provider';
import { fmt } from './support';

const TICK_MS = 1000 / 100; // USER_HZ: /proc's clock ticks are 1/100 s on Linux

/** utime + stime + cutime + cstime of one /proc stat line, in clock ticks. */
function ticksOf(stat: string): { ppid: number; ticks: number } {
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) };
}

/**
 * CPU (ms) used so far by this process and every process below it — the live ones read from
 * /proc, the ended ones through their parents' `cutime`/`cstime` (each waited for its children) —
 * so a difference of two readings is what a piece of work cost, whoever ran it.
 */
export function treeCpuMs(): number {
  const all = new Map<number, { ppid: number; ticks: number }>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      all.set(Number(d), ticksOf(fs.readFileSync(`/proc/${d}/stat`, 'utf8')));
    } catch {
      // gone meanwhile
    }
  }
  let ticks = 0;
  for (const [pid, p] of all) {
    let up: number | undefined = pid;
    for (let hops = 0; up && up !== process.pid && hops < 64; hops++) up = all.get(up)?.ppid;
    if (up === process.pid) ticks += p.ticks;
  }
  return ticks * TICK_MS;
}

/**
 * CPU (ms) used so far by the far `arbor acp --nodes` processes below this one: their own Node
 * (utime + stime), and everything below them — live (the process spawner, the sandbox) or ended
 * (git) — so a difference of two readings splits the far side's share of a piece of work.
 */
export function farCpuMs(): { node: number; below: number } {
  const all = new Map<number, { ppid: number; own: number; ticks: number; far: boolean }>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const args = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      const far = args.includes('acp') && args.includes('--nodes') && args.some((a) => a.endsWith('arbor.js'));
      all.set(Number(d), { ...ticksOf(stat), own: Number(f[11]) + Number(f[12]), far });
    } catch {
      // gone meanwhile
    }
  }
  let node = 0;
  let below = 0;
  for (const [pid, p] of all) {
    if (p.far) {
      node += p.own;
      below += p.ticks - p.own;
      continue;
    }
    let up: number | undefined = all.get(pid)?.ppid;
    for (let hops = 0; up && hops < 64; hops++) {
      const q = all.get(up);
      if (!q) break;
      if (q.far) {
        // A live process below a far one: its ended children are in its own cutime, not the far one's.
        below += p.ticks;
        break;
      }
      up = q.ppid;
    }
  }
  return { node: node * TICK_MS, below: below * TICK_MS };
}

const ORDER: readonly PlacedPhase[] = ['worktree', 'prepare', 'start', 'session', 'prompt', 'collect', 'reset', 'release'];

/** The placed provider's trace for a set of agents, summed per phase. */
export class PhaseLog {
  private readonly spans: { node: string; phase: PlacedPhase; start: number; end: number; cpu?: number }[] = [];
  private readonly began = new Map<string, number>();
  private readonly ended = new Map<string, number>();
  /** Read the process tree's CPU at each phase's end (only for agents run one at a time: the phases then split the CPU). */
  cpu = false;
  readonly trace: PlacedTrace = (e) => void this.spans.push(this.cpu ? { ...e, cpu: treeCpuMs() } : e);

  /** The agent `node` was asked for at `t` and its result came at `end` (`performance.now()`). */
  agent(node: string, t: number, end: number): void {
    this.began.set(node, t);
    this.ended.set(node, end);
  }

  /**
   * CPU per phase (ms, means over the agents), from the readings at each phase's end: a phase's
   * CPU is the tree's since the previous reading. Meaningful only with `cpu` set and one agent at a time.
   */
  cpuLine(): string {
    const sums = new Map<PlacedPhase, number>();
    const nodes = [...this.began.keys()];
    for (const n of nodes) {
      const mine = this.spans.filter((s) => s.node === n && s.cpu !== undefined).sort((a, b) => a.end - b.end);
      for (let i = 1; i < mine.length; i++) sums.set(mine[i]!.phase, (sums.get(mine[i]!.phase) ?? 0) + mine[i]!.cpu! - mine[i - 1]!.cpu!);
    }
    return ORDER.filter((p) => sums.has(p))
      .map((p) => `${p} ${fmt(sums.get(p)! / nodes.length)}`)
      .join(', ');
  }

  clear(): void {
    this.spans.length = 0;
    this.began.clear();
    this.ended.clear();
  }

  /** One line: per agent (means over the agents seen), the wait before its first phase, each phase, and what is left. */
  line(): string {
    const nodes = [...this.began.keys()];
    if (!nodes.length) return 'no agents traced';
    const per = (phase: PlacedPhase) =>
      this.spans.filter((s) => s.phase === phase && this.began.has(s.node)).reduce((a, s) => a + s.end - s.start, 0) / nodes.length;
    const first = (n: string) => Math.min(...this.spans.filter((s) => s.node === n).map((s) => s.start));
    const queued = nodes.reduce((a, n) => a + Math.max(0, first(n) - this.began.get(n)!), 0) / nodes.length;
    const total = nodes.reduce((a, n) => a + this.ended.get(n)! - this.began.get(n)!, 0) / nodes.length;
    const phases = ORDER.map((p) => [p, per(p)] as const);
    const rest = total - queued - phases.reduce((a, [, v]) => a + v, 0);
    return `per agent (mean of ${nodes.length}) ${fmt(total)} ms = created (checked, its local worktree's entry made, published) + queued for a slot ${fmt(queued)}, ${phases.map(([p, v]) => `${p} ${fmt(v)}`).join(', ')}, rest (local worktree, dispose, between phases) ${fmt(rest)}`;
  }
}
