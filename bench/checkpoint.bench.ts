// checkpoint.turn.vs_write: a turn that writes 20 new files with checkpoints on ÷ the same turn
// with them off, on a 5,000-file workspace, scripted model server (turns of the two harnesses
// alternate in blocks, so both see the same machine load). What the ratio holds down is what
// recording adds per write: two in-process reads, hashes and deflated blobs, one batched
// `git check-ignore` per step, and the `checkpoint` event in the step's group commit.
//
// rewind.subtree.vs_checkout: rewinding a subtree (a child and its grandchild) that changed 200
// files — plan (logs read, current files hashed, diffs) and apply (atomic writes, the rewind's
// own record) — ÷ a plain `git checkout -- <the 200 files>` in an ordinary repository of the
// same files. Measured in paired rounds (decision 0116): each round one rewind and one checkout,
// each first in half the rounds (and every third round the bare durable write after them: the
// floor, context only); the figure is the Hodges–Lehmann estimate of the rounds' rewind ÷ checkout on the log scale, with a
// 90 % bootstrap interval. Each rewind is undone (untimed) before the next, and the checkout's
// files are changed again (untimed) before each checkout.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Harness } from '../src/core/harness';
import { OpenAICompatibleClient } from '../src/core/model/openai-client';
import type { ChatBody } from '../test/support/model-server';
import { ModelServer } from '../test/support/model-server';
import { bootstrapInterval, hodgesLehmannRatio, orders } from './paired';
import { type BenchOptions, type Figure, type FigureSpec, fmt, median, now, tempDir } from './support';

export const name = 'checkpoint';

const TURN: FigureSpec = { id: 'checkpoint.turn.vs_write', op: '<=', target: 1.3 };
const REWIND: FigureSpec = { id: 'rewind.subtree.vs_checkout', op: '<=', target: 2 };
export const figures: readonly FigureSpec[] = [TURN, REWIND];

const WRITES = 20;
const WORKSPACE_FILES = 5000;
const SUBTREE_FILES = 200;

function fill(ws: string, n: number): void {
  for (let d = 0; d < n / 100; d++) {
    const dir = path.join(ws, 'src', `m${d}`);
    fs.mkdirSync(dir, { recursive: true });
    for (let f = 0; f < 100; f++) fs.writeFileSync(path.join(dir, `f${f}.ts`), `export const v${d}_${f} = ${d * 100 + f};\n`.repeat(20));
  }
}

async function open(storeDir: string, ws: string, server: ModelServer, checkpoints: boolean): Promise<Harness> {
  const client = new OpenAICompatibleClient({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 });
  return Harness.open({
    storeDir,
    workspace: [ws],
    model: { client, name: 'bench' },
    sandbox: 'workspace-write',
    approval: 'never',
    releaseDelayMs: 5,
    checkpoints: { enabled: checkpoints },
  });
}

const lastText = (body: ChatBody) => String(body.messages.at(-1)?.content ?? '');

async function turnFigure(opts: BenchOptions): Promise<Figure> {
  const server = await ModelServer.start();
  const dir = tempDir('arbor-bench-ckpt-');
  const make = (label: string) => {
    const ws = path.join(dir, label);
    fill(ws, WORKSPACE_FILES);
    return fs.realpathSync(ws);
  };
  const wsOn = make('ws-on');
  const wsOff = make('ws-off');
  let n = 0;
  // A turn: one step of 20 write_file calls to new files, then an answer.
  server.setFallback((body) => {
    if (body.messages.at(-1)?.role === 'tool') return { text: 'done' };
    const turn = /turn (\d+)/.exec(lastText(body))?.[1] ?? String(n++);
    return {
      toolCalls: Array.from({ length: WRITES }, (_, k) => ({
        name: 'write_file',
        arguments: { path: `out/t${turn}/f${k}.ts`, content: `// turn ${turn} file ${k}\n`.repeat(40) },
      })),
    };
  });
  const on = await open(path.join(dir, 'store-on'), wsOn, server, true);
  const off = await open(path.join(dir, 'store-off'), wsOff, server, false);
  const onMs: number[] = [];
  const offMs: number[] = [];
  try {
    const a = await on.createSession();
    const b = await off.createSession();
    let turn = 0;
    const run = async (agent: typeof a, out: number[] | undefined) => {
      const t0 = now();
      await agent.accept(`turn ${turn++}`);
      await agent.idle();
      out?.push(now() - t0);
    };
    await run(a, undefined); // the shadow repository is created on the first write
    await run(b, undefined);
    const blocks = opts.quick ? 3 : 6;
    for (let k = 0; k < blocks; k++) {
      for (let i = 0; i < 5; i++) await run(a, onMs);
      for (let i = 0; i < 5; i++) await run(b, offMs);
    }
    const recorded = a.session.events.filter((e) => e.type === 'checkpoint').length;
    if (recorded !== blocks * 5 + 1) throw new Error(`${recorded} checkpoint events for ${blocks * 5 + 1} turns`);
    opts.note(
      `turn writing ${WRITES} files (${WORKSPACE_FILES}-file workspace): with checkpoints ${fmt(median(onMs))} ms vs without ${fmt(median(offMs))} ms (medians of ${onMs.length})`,
    );
    return { ...TURN, value: median(onMs) / median(offMs) };
  } finally {
    await on.close();
    await off.close();
    await server.stop();
  }
}

/**
 * The floor of a rewind's writes: each file replaced as `writeAtomic` does (a temp file beside it,
 * fsynced, renamed over it), the fsyncs all in flight at once, then each folder fsynced — raw
 * `node:fs`, no Arbor code, over files that are on disk already, as the rewind's are.
 */
async function bareDurableWrite(folder: string, files: readonly string[], tag: string): Promise<void> {
  const C = fs.constants;
  const temps = files.map((f) => {
    const file = path.join(folder, f);
    const temp = path.join(path.dirname(file), `.${path.basename(file)}.${tag}.tmp`);
    const fd = fs.openSync(temp, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
    fs.writeFileSync(fd, `${tag} ${f}\n`.repeat(30));
    return { fd, temp, file };
  });
  await Promise.all(temps.map((t) => new Promise<void>((ok, fail) => fs.fsync(t.fd, (e) => (e ? fail(e) : ok())))));
  for (const t of temps) {
    fs.closeSync(t.fd);
    fs.renameSync(t.temp, t.file);
  }
  for (const dir of new Set(temps.map((t) => path.dirname(t.file)))) {
    const fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
    fs.closeSync(fd);
  }
}

/** Rounds of the rewind figure (even: each side first in half of them). */
const REWIND_ROUNDS = { quick: 30, full: 80 };
/**
 * The quick bench stops at the first even round count (10 at least) past this many ms: a round (a
 * rewind, its untimed undo, a checkout, a third of a floor) is ~0.5 s idle, ~2.3 s at load 9.
 */
const REWIND_QUICK_BUDGET_MS = 20_000;
/** The floor (context only) is measured after every third round's pair. */
const FLOOR_EVERY = 3;

async function rewindFigure(opts: BenchOptions): Promise<Figure> {
  const server = await ModelServer.start();
  const dir = tempDir('arbor-bench-rewind-');
  const ws = path.join(dir, 'ws');
  fill(ws, SUBTREE_FILES);
  const real = fs.realpathSync(ws);
  const files = fs.readdirSync(path.join(real, 'src')).flatMap((d) => fs.readdirSync(path.join(real, 'src', d)).map((f) => `src/${d}/${f}`));
  const half = files.length / 2;
  const isChild = (body: ChatBody) => body.messages.some((m) => m.role === 'user' && String(m.content ?? '').startsWith('[Arbor runtime] You are a subagent'));
  const task = (body: ChatBody) => String([...body.messages].reverse().find((m) => m.role === 'user')?.content ?? '');
  const writes = (list: string[]) => ({ toolCalls: list.map((p) => ({ name: 'write_file', arguments: { path: p, content: `changed ${p}\n`.repeat(30) } })) });
  server.setFallback((body) => {
    const last = body.messages.at(-1);
    const all = body.messages.map((m) => String(m.content ?? '')).join('\n');
    if (isChild(body)) {
      if (task(body).includes('GRAND')) return last?.role === 'tool' ? { text: 'grand done' } : writes(files.slice(half));
      if (last?.role === 'tool' && all.includes('grand done')) return { text: 'child done' };
      if (last?.role === 'tool') return { toolCalls: [{ name: 'subagent', arguments: { prompt: 'GRAND: the second half', label: 'grand' } }] };
      return writes(files.slice(0, half));
    }
    if (last?.role === 'tool') return { text: 'root done' };
    return { toolCalls: [{ name: 'subagent', arguments: { prompt: 'CHILD: the first half', label: 'child' } }] };
  });
  const h = await open(path.join(dir, 'store'), real, server, true);
  // The ordinary repository: the same files committed, changed before each checkout.
  const repo = path.join(dir, 'repo');
  fill(repo, SUBTREE_FILES);
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@b', ...args], { cwd: repo, stdio: 'pipe' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'base');
  const bare = path.join(dir, 'bare');
  fill(bare, SUBTREE_FILES);
  const rewindMs: number[] = [];
  const planMs: number[] = [];
  const checkoutMs: number[] = [];
  const bareMs: number[] = [];
  // Where the apply's time goes (RewindOutcome.phases).
  const phases: Record<'locks' | 'intent' | 'checks' | 'writes' | 'record', number[]> = { locks: [], intent: [], checks: [], writes: [], record: [] };
  try {
    const root = await h.createSession();
    await root.accept('go');
    await h.settle();
    const child = h.store.children(root.id)[0].id;
    const point = (await h.readSession(child)).events.find((e) => e.type === 'user/message')!.seq;
    let undo: number | undefined; // the last rewind's record, undone (untimed) before the next rewind
    const rewind = async () => {
      if (undo !== undefined) await h.checkpoints.apply(await h.checkpoints.planUndo(child, undo));
      const t0 = now();
      const plan = await h.checkpoints.plan({ sessionId: child, toSeq: point, subtree: true });
      const t1 = now();
      const out = await h.checkpoints.apply(plan);
      const t2 = now();
      planMs.push(t1 - t0);
      rewindMs.push(t2 - t0);
      if (out.restored.length !== SUBTREE_FILES) throw new Error(`rewound ${out.restored.length} files, not ${SUBTREE_FILES}`);
      const p = out.phases;
      if (p) {
        for (const k of ['intent', 'checks', 'writes', 'record'] as const) phases[k].push(p[k]);
        // What the apply spent outside its phases (the service's locks) is the rest of it.
        phases.locks.push(t2 - t1 - (p.intent + p.checks + p.writes + p.record));
      }
      undo = out.seq;
    };
    const checkout = async () => {
      for (const f of files) fs.writeFileSync(path.join(repo, f), `changed ${f}\n`.repeat(30));
      const t = now();
      git('checkout', '--', ...files);
      checkoutMs.push(now() - t);
    };
    const floor = async () => {
      const t = now();
      await bareDurableWrite(bare, files, 'bare');
      bareMs.push(now() - t);
    };
    await bareDurableWrite(bare, files, 'before'); // untimed: its files durable, as the rewind finds its own
    // Warm-up, untimed: one of each, so no side's first round pays the compiler or a cold cache.
    await rewind();
    await checkout();
    for (const xs of [rewindMs, planMs, checkoutMs, ...Object.values(phases)]) xs.length = 0;
    const sequences = orders(2);
    const sides = [rewind, checkout];
    const max = opts.quick ? REWIND_ROUNDS.quick : REWIND_ROUNDS.full;
    const t0 = now();
    let rounds = 0;
    while (rounds < max && !(opts.quick && rounds >= 10 && rounds % 2 === 0 && now() - t0 > REWIND_QUICK_BUDGET_MS)) {
      for (const m of sequences[rounds % sequences.length]) await sides[m]();
      if (rounds % FLOOR_EVERY === 0) await floor();
      rounds++;
    }
    const spent = (now() - t0) / 1000;
    const ratios = rewindMs.map((r, i) => r / checkoutMs[i]);
    const figureOf = (rs: readonly number[]) => hodgesLehmannRatio(rs.map((i) => ratios[i]));
    const value = figureOf(ratios.map((_, i) => i));
    const [low, high] = bootstrapInterval(rounds, figureOf);
    const floorRatio = hodgesLehmannRatio(bareMs.map((b, i) => b / checkoutMs[i * FLOOR_EVERY]));
    const planRatio = hodgesLehmannRatio(planMs.map((p, i) => p / checkoutMs[i]));
    const straddles = low <= REWIND.target && high > REWIND.target;
    const split = phases.record.length
      ? `; its apply ${fmt(median(rewindMs.map((r, i) => r - planMs[i])))} ms (medians of each part): locks ${fmt(median(phases.locks))}, intent ${fmt(median(phases.intent))} (durable before any file), checks ${fmt(median(phases.checks))} (each file read again and hashed, what it overwrites stored), writes ${fmt(median(phases.writes))} (temp files, their fsyncs, renames, folder fsyncs), record ${fmt(median(phases.record))} (the log's group commit, the intent removed) ms`
      : '';
    opts.note(
      `rewinding a subtree that changed ${SUBTREE_FILES} files (plan + apply) ${fmt(median(rewindMs))} ms vs git checkout of them ${fmt(median(checkoutMs))} ms (medians of ${rounds} rounds; their ratio ${fmt(median(rewindMs) / median(checkoutMs))}); ` +
        `the figure is the Hodges–Lehmann estimate of the rounds' ratios on the log scale (each round a rewind and a checkout, each first in half of them; decision 0116), its 90% bootstrap interval ${fmt(low)}–${fmt(high)}` +
        `${straddles ? `, which straddles ${REWIND.target}: the machine's noise decides whether it reads ok or MISS` : ''}; ` +
        `where the rewind's time goes: the plan (logs read, each current file read and hashed, each earlier one inflated, a diff each) ${fmt(median(planMs))} ms = ${fmt(planRatio)} × the checkout${split}; ` +
        `the same files written atomically and durably with no Arbor around them (temp files, their fsyncs at once, renames, one folder fsync; after every ${FLOOR_EVERY}rd round's pair) ${fmt(median(bareMs))} ms = ${fmt(floorRatio)} × its round's checkout; ${fmt(spent)} s of rounds` +
        (value > REWIND.target && floorRatio + planRatio > REWIND.target
          ? `; AT ITS FLOOR: that write plus the plan is already ${fmt(floorRatio + planRatio)} × the checkout, which neither fsyncs nor keeps a file whole while it writes`
          : ''),
    );
    return { ...REWIND, value };
  } finally {
    await h.close();
    await server.stop();
  }
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  return [await turnFigure(opts), await rewindFigure(opts)];
}
