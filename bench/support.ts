// Shared helpers of the benchmark: the figure type, statistics, timing (whole processes too),
// temp folders, the realistic events (from events.ts) and the model server in a process of its own.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { spawnerPid } from '../src/core/process/spawner';

export interface BenchOptions {
  /** Fewer repetitions (same sizes): finishes in under a minute. */
  quick: boolean;
  /** Print a context line (`# …`): absolute numbers, progress. */
  note(line: string): void;
}

/** What a figure is held to: its id, comparison and target. */
export interface FigureSpec {
  id: string;
  op: '<=' | '>=';
  target: number;
}

/**
 * One figure: a ratio and its target. `missed` says why it could not be measured (its value
 * is then NaN); such a figure still prints, as a MISS with that reason.
 */
export interface Figure extends FigureSpec {
  value: number;
  missed?: string;
}

/** A bench module: registered in run.ts, run in the same process as the others. */
export interface BenchModule {
  name: string;
  /**
   * The figures it reports. Declared up front so that run.ts prints a MISS for each one the
   * module did not return (it crashed, or a path forgot one): a figure never just disappears.
   */
  figures?: readonly FigureSpec[];
  run(opts: BenchOptions): Promise<Figure[]>;
}

export function passes(f: Figure): boolean {
  return f.missed === undefined && Number.isFinite(f.value) && (f.op === '<=' ? f.value <= f.target : f.value >= f.target);
}

/** A figure that could not be measured, and why (one line). */
export function missed(spec: FigureSpec, reason: string): Figure {
  return { ...spec, value: Number.NaN, missed: reason.replace(/\s+/g, ' ').trim() || 'no reason given' };
}

/** 2–3 significant digits, never exponent notation. */
export function fmt(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  if (a >= 0.1) return v.toFixed(2);
  return v.toPrecision(2);
}

/** `bench <id> <value> <op><target> ok|MISS`, or `bench <id> - <op><target> MISS (reason)`. */
export function formatFigure(f: Figure): string {
  if (f.missed !== undefined || !Number.isFinite(f.value)) return `bench ${f.id} - ${f.op}${f.target} MISS (${f.missed ?? `not a number: ${f.value}`})`;
  return `bench ${f.id} ${fmt(f.value)} ${f.op}${f.target} ${passes(f) ? 'ok' : 'MISS'}`;
}

/**
 * The figures of a module as run.ts prints them: what it returned, then a MISS for each
 * declared figure it did not return (`reason` says why: its crash, or that it returned none).
 */
export function completeFigures(declared: readonly FigureSpec[] | undefined, got: readonly Figure[], reason: string): Figure[] {
  const ids = new Set(got.map((f) => f.id));
  return [...got, ...(declared ?? []).filter((s) => !ids.has(s.id)).map((s) => missed(s, reason))];
}

// ---------------------------------------------------------------------------
// statistics and timing

export function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/** Milliseconds, sub-microsecond resolution. */
export const now = (): number => performance.now();

export async function timed<T>(fn: () => Promise<T> | T): Promise<{ ms: number; value: T }> {
  const t0 = now();
  const value = await fn();
  return { ms: now() - t0, value };
}

export const MB = 1024 * 1024;

/**
 * One warm run of each measure, then `n` of each in pairs whose order alternates, so both see
 * the same machine load and neither always runs right after the other's teardown.
 */
export async function pairedRuns(n: number, a: () => Promise<number>, b: () => Promise<number>): Promise<[number[], number[]]> {
  await a();
  await b();
  const as: number[] = [];
  const bs: number[] = [];
  for (let i = 0; i < n; i++) {
    if (i % 2 === 0) {
      as.push(await a());
      bs.push(await b());
    } else {
      bs.push(await b());
      as.push(await a());
    }
  }
  return [as, bs];
}

// ---------------------------------------------------------------------------
// whole processes

/** What one whole process run took and printed. */
export interface ProcessRun<T = undefined> {
  /** Wall time from spawn to exit, every output byte read (ms). */
  ms: number;
  /** With `cpu`: user + system CPU time of the process and the descendants it reaped (ms; see `childCpuMs`). */
  cpuMs?: number;
  code: number | null;
  /** Its output, with `output: 'keep'` (the default); empty otherwise. */
  stdout: string;
  stderr: string;
  /** What `drive` returned (undefined without one). */
  value: T;
}

export interface ProcessOptions<T> {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** In a process group of its own (the default), as run_command and the remote providers start programs. */
  detached?: boolean;
  /** Written to its stdin, which then closes; without it stdin is /dev/null (a pipe makes some programs wait for input). */
  stdin?: string | Buffer;
  /** Bytes on a fourth pipe (bubblewrap's seccomp filter). */
  fd3?: Buffer;
  /** stdout and stderr: read and kept (the default), read and dropped, or never opened (/dev/null). */
  output?: 'keep' | 'drain' | 'ignore';
  /** Each line of stdout as it arrives (the reader's own work is timed too). */
  onLine?(line: string): void;
  /** Measure its CPU time too (`ProcessRun.cpuMs`). */
  cpu?: boolean;
  /**
   * A program that talks over stdin and stdout (an ACP agent): every stdio is a pipe handed to
   * `drive`, which does the talking and ends the program; `exited` resolves once it has. The run
   * is timed until both are done; nothing of stdout is read here.
   */
  drive?(child: ChildProcessWithoutNullStreams, exited: Promise<void>): Promise<T>;
}

/**
 * Runs a program as a user would and times it from spawn to exit (its output read to the end,
 * or driven to its end): the one way every bench times a whole process.
 */
export async function timeProcess<T = undefined>(file: string, args: readonly string[], opts: ProcessOptions<T> = {}): Promise<ProcessRun<T>> {
  const { output = 'keep', drive } = opts;
  const piped = drive || output !== 'ignore';
  const stdio = [drive || opts.stdin !== undefined ? 'pipe' : 'ignore', piped ? 'pipe' : 'ignore', piped ? 'pipe' : 'ignore', ...(opts.fd3 ? ['pipe'] : [])];
  const cpu0 = opts.cpu ? childCpuMs() : 0;
  const t0 = now();
  const child = spawn(file, args, { env: opts.env, cwd: opts.cwd, detached: opts.detached ?? true, stdio: stdio as ('pipe' | 'ignore')[] });
  const run = { code: null as number | null, stdout: '', stderr: '' };
  const exited = new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      run.code = code;
      resolve();
    });
  });
  if (opts.fd3) (child.stdio[3] as NodeJS.WritableStream).end(opts.fd3);
  if (opts.stdin !== undefined) {
    child.stdin?.on('error', () => undefined); // a program that exits without reading all of it: not the run's failure
    child.stdin?.end(opts.stdin);
  }
  let value: T | undefined;
  if (drive) {
    child.stderr?.resume();
    [value] = await Promise.all([drive(child as ChildProcessWithoutNullStreams, exited), exited]);
  } else {
    if (child.stdout && child.stderr) readOutput(child.stdout, child.stderr, output === 'keep' ? run : undefined, opts.onLine);
    await exited;
  }
  const ms = now() - t0;
  return { ms, ...(opts.cpu ? { cpuMs: childCpuMs() - cpu0 } : {}), ...run, value: value as T };
}

/** Reads stdout and stderr to their end: kept in `into`, or dropped; stdout's lines to `onLine` as they arrive. */
function readOutput(
  stdout: NodeJS.ReadableStream,
  stderr: NodeJS.ReadableStream,
  into: { stdout: string; stderr: string } | undefined,
  onLine?: (line: string) => void,
): void {
  let buf = '';
  stdout.setEncoding('utf8');
  stdout.on('data', (d: string) => {
    if (into) into.stdout += d;
    if (!onLine) return;
    buf += d;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      onLine(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
  });
  if (into) stderr.setEncoding('utf8').on('data', (d: string) => (into.stderr += d));
  else stderr.resume();
}

/** The last line of a failed run's stderr (or stdout), for a one-line reason. */
export function lastLine(r: ProcessRun<unknown>): string {
  const lines = `${r.stderr}\n${r.stdout}`.split('\n').filter((l) => l.trim());
  return `exit ${r.code}${lines.length ? `: ${lines[lines.length - 1].trim().slice(0, 200)}` : ''}`;
}

/**
 * User and system CPU time of this process's waited-for children so far, ms (Linux
 * `/proc/self/stat`, in clock ticks of 10 ms; 0 elsewhere). A child's time is counted once it
 * is reaped, with the time of the descendants it reaped itself.
 */
export function childCpuMs(): number {
  // This process's reaped children, and those its spawner reaped for it (decision 0095).
  return reapedCpuMs('self') + (spawnerPid() ? reapedCpuMs(spawnerPid()!) : 0);
}

/** cutime + cstime of a process, in ms (0 where /proc cannot say). */
function reapedCpuMs(pid: number | 'self'): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 16 and 17 (cutime, cstime), counted from the state (field 3) here, in clock ticks (100 a second on Linux).
    return ((Number(f[13]) + Number(f[14])) * 1000) / 100;
  } catch {
    return 0;
  }
}

// ---------------------------------------------------------------------------
// temp folders

const made = new Set<string>();

/** A fresh folder under os.tmpdir(); removed by cleanupTemps() (and on exit). */
export function tempDir(prefix = 'arbor-bench-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.add(dir);
  return dir;
}

export function cleanupTemps(): void {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
  made.clear();
}

process.once('exit', cleanupTemps);
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    cleanupTemps();
    process.exit(130);
  });
}

/**
 * Copy a folder and fsync every copied file, so the copy's dirty pages are not flushed
 * by (and billed to) the fsyncs being measured afterwards.
 */
export async function copyDirDurable(src: string, dst: string): Promise<void> {
  // Folders and regular files only: an open store's lock token is a socket (cp refuses it, open fails on it).
  await fs.promises.cp(src, dst, {
    recursive: true,
    filter: (from) => {
      const st = fs.lstatSync(from);
      return st.isDirectory() || st.isFile();
    },
  });
  const syncAll = async (dir: string): Promise<void> => {
    for (const ent of await fs.promises.readdir(dir, { withFileTypes: true })) {
      const p = path.join(dir, ent.name);
      if (ent.isDirectory()) await syncAll(p);
      else if (!ent.isFile()) continue;
      const fh = await fs.promises.open(p, 'r');
      try {
        await fh.sync();
      } finally {
        await fh.close();
      }
    }
  };
  await syncAll(dst);
  const fh = await fs.promises.open(dst, 'r');
  await fh.sync();
  await fh.close();
}

// ---------------------------------------------------------------------------
// realistic events (bench/events.ts)

export { eventBytes, header, makeEvent, makeEvents, rng, shuffle } from './events';

/**
 * The test model server in a child process of its own, as a model always runs, answering every
 * request with `reply`.
 */
export async function modelProcess(reply: string): Promise<{ baseURL: string; stop(): void }> {
  const modulePath = require.resolve('../test/support/model-server');
  const code = `const { ModelServer } = require(${JSON.stringify(modulePath)});
ModelServer.start().then((s) => { s.setFallback(() => ({ text: ${JSON.stringify(reply)} })); process.stdout.write(s.baseURL + '\\n'); });`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const baseURL = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.trim());
    });
    child.on('exit', (c) => reject(new Error(`the model server process exited (${c})`)));
  });
  return { baseURL, stop: () => child.kill() };
}
