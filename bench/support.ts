// Shared helpers of the benchmark: the figure type, a realistic event generator,
// statistics, timing, temp folders and the model server in a process of its own.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { SessionEvent, SessionHeader } from '../src/core/session/events';
import { prng as rng } from '../test/support/store-fixtures';

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
  await fs.promises.cp(src, dst, { recursive: true });
  const syncAll = async (dir: string): Promise<void> => {
    for (const ent of await fs.promises.readdir(dir, { withFileTypes: true })) {
      const p = path.join(dir, ent.name);
      if (ent.isDirectory()) await syncAll(p);
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
// realistic events

/** mulberry32: a small deterministic PRNG (uniform in [0, 1)), the one the store fixtures use. */
export { rng };

/** A shuffled copy (Fisher–Yates). */
export function shuffle<T>(xs: readonly T[], random: () => number): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

const PROSE = `I looked at the store module and the journal is replayed at open before the catalog is reconciled. \
The failing test expects the session to be listed after a crash between the tree write and the catalog write, \
so reconcile has to index tree files the catalog does not know. Next I will read the tree file code, check how \
headers are copied, and then run the focused test again. If it still fails I will add a trace of the lsn values. \
Let me also check whether the checkpoint threshold uses the database size, since a large tree would otherwise \
export the whole file far too often. The change is small: one guard and a test that kills the writer mid-append. `;

const CODE = `export async function loadConfig(file: string): Promise<Config> {
  const text = await fs.promises.readFile(file, "utf8");
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(\`\${file} is not valid JSON: \${(err as Error).message}\`);
  }
  if (typeof raw !== "object" || raw === null) throw new ConfigError(\`\${file} must hold an object\`);
  const cfg = { ...DEFAULTS, ...(raw as Partial<Config>) };
  for (const [key, value] of Object.entries(cfg)) {
    if (value === undefined) delete (cfg as Record<string, unknown>)[key];
  }
  return cfg;
}

describe("loadConfig", () => {
  it("merges defaults", async () => {
    const cfg = await loadConfig(fixture("partial.json"));
    assert.equal(cfg.model, "deepseek-chat");
    assert.deepEqual(cfg.tools, ["read_file", "search_files"]);
  });
});
`;

const CODE2 = CODE + CODE.replace(/Config/g, 'Settings');
const FILES = ['src/core/store/tree.ts', 'src/core/store/journal.ts', 'src/config/load.ts', 'test/store.test.ts', 'README.md', 'src/core/agent/agent.ts'];
const TOOLS = ['read_file', 'search_files', 'list_files', 'run_command', 'edit_file'];
const T0 = Date.parse('2025-06-01T09:00:00.000Z');

function slice(src: string, r: () => number, min: number, max: number): string {
  const len = Math.min(src.length, Math.floor(min + r() * (max - min)));
  const start = Math.floor(r() * (src.length - len));
  // Flatten (no sliced string pinning the corpus) so sizes and copies are realistic.
  return ` ${src.slice(start, start + len)}`.slice(1);
}

function hex(r: () => number, n: number): string {
  let s = '';
  while (s.length < n)
    s += Math.floor(r() * 0x100000000)
      .toString(16)
      .padStart(8, '0');
  return s.slice(0, n);
}

// One turn is 10 events: a user message, two tool round trips, a final answer.
// Sizes are tuned so the mean serialized event is ~500 bytes (see eventBytes()).
const TURN = 10;

/** The event at `seq` of a synthetic session: deterministic, valid under Session's ordering rules. */
export function makeEvent(seq: number): SessionEvent {
  const r = rng(seq * 2654435761 + 12345);
  const turn = Math.floor(seq / TURN);
  const pos = seq % TURN;
  const at = new Date(T0 + seq * 1500).toISOString();
  const turnId = `turn-${turn}`;
  const model = 'deepseek-chat';
  const usage = () => ({ promptTokens: 8000 + Math.floor(r() * 40000), completionTokens: 50 + Math.floor(r() * 900), cacheHitTokens: Math.floor(r() * 8000) });
  const call = (k: number) => `call_${turn}_${k}`;
  const tool = (k: number) => TOOLS[(turn + k) % TOOLS.length];
  switch (pos) {
    case 0:
      return { seq, type: 'turn/start', at, turnId };
    case 1:
      return { seq, type: 'user/message', at, text: slice(PROSE, r, 180, 540), source: { kind: 'user' }, messageId: `msg-${turn}` };
    case 2:
    case 5:
      return {
        seq,
        type: 'request/header',
        at,
        model,
        provider: 'deepseek',
        bytes: 30000 + Math.floor(r() * 90000),
        headBytes: 12000,
        headHash: hex(r, 64),
        prefixHash: hex(r, 64),
      };
    case 3:
    case 6: {
      const k = pos === 3 ? 0 : 1;
      const file = FILES[Math.floor(r() * FILES.length)];
      return {
        seq,
        type: 'assistant/message',
        at,
        text: slice(PROSE, r, 60, 200),
        reasoning: slice(PROSE, r, 80, 260),
        toolCalls: [{ id: call(k), name: tool(k), arguments: JSON.stringify({ path: file, query: 'checkpoint', maxResults: 20 }) }],
        usage: usage(),
        model,
      };
    }
    case 4:
    case 7: {
      const k = pos === 4 ? 0 : 1;
      return { seq, type: 'tool/result', at, callId: call(k), name: tool(k), content: slice(CODE2, r, 450, 980), isError: false };
    }
    case 8:
      return { seq, type: 'assistant/message', at, text: slice(PROSE, r, 300, 640), usage: usage(), model };
    default:
      return { seq, type: 'turn/end', at, turnId, stopReason: 'completed' };
  }
}

/** Events [from, from + n). */
export function makeEvents(from: number, n: number): SessionEvent[] {
  const out = new Array<SessionEvent>(n);
  for (let i = 0; i < n; i++) out[i] = makeEvent(from + i);
  return out;
}

/** Bytes of the events as stored: each event's JSON, UTF-8. */
export function eventBytes(events: readonly SessionEvent[]): number {
  let n = 0;
  for (const e of events) n += Buffer.byteLength(JSON.stringify(e));
  return n;
}

export function header(id: string): SessionHeader {
  return { id, createdAt: new Date(T0).toISOString(), origin: 'user', title: 'bench session', cwd: '/work/project' };
}

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

/**
 * The context a durable-floor figure (a turn, a one-shot child ÷ a bare request) adds when the
 * disk alone puts it past its target: without the durable writes it meets the target, but the
 * fdatasyncs the design requires (decision 0063) take more than the target leaves over the bare
 * request. Then only fewer commit points or a faster disk meet it, which is a decision about
 * the target or the design, never a change to what the figure measures. Empty otherwise.
 */
export function floorVerdict(spec: FigureSpec, withoutDisk: number, bareMs: number, syncs: number, syncMs: number): string {
  const allowance = (spec.target - 1) * bareMs;
  if (spec.op !== '<=' || withoutDisk > spec.target || syncMs <= allowance) return '';
  return (
    `; AT ITS FLOOR: without the durable writes the figure is ${fmt(withoutDisk)} (target ≤ ${spec.target}), but its ${fmt(syncs)} fdatasyncs ` +
    `take ${fmt(syncMs)} ms where ≤ ${spec.target} leaves ${fmt(allowance)} ms over the ${fmt(bareMs)} ms bare request: out of reach on this disk ` +
    `with this many commit points; the target needs a decision`
  );
}

/**
 * The context a fan-out efficiency figure (ideal ÷ measured wall time: waves of `concurrency`
 * children, each waiting `modelMs` on the model) adds when this process's CPU alone puts it past
 * its target: the children of a wave start and finish together, so their CPU runs one after
 * another on the one event loop, and the target leaves (ideal ÷ target − ideal) ÷ waves of it a
 * wave. Empty when the CPU fits. The CPU is the whole process's (the in-process model server's
 * included), as the figure measures it.
 */
export function cpuVerdict(spec: FigureSpec, children: number, concurrency: number, modelMs: number, cpuPerChildMs: number): string {
  const waves = Math.ceil(children / concurrency);
  const ideal = waves * modelMs;
  const perWave = (ideal / spec.target - ideal) / waves;
  if (spec.op !== '>=' || concurrency * cpuPerChildMs <= perWave) return '';
  return (
    `; CPU-BOUND: the ${concurrency} children of a wave need ${concurrency} × ${fmt(cpuPerChildMs)} = ${fmt(concurrency * cpuPerChildMs)} ms of the one event loop ` +
    `each wave, where ≥ ${spec.target} leaves ${fmt(perWave)} ms a wave beside its ${fmt(modelMs)} ms model wait (≤ ${fmt(perWave / concurrency)} ms of CPU per child)`
  );
}
