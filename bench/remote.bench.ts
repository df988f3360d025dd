// Remote providers (issue 13), on the real pinned programs from .tools/remote
// (`npm run setup:remote`, run by `npm test` before the bench):
//
// remote.codex.vs_direct, remote.claude.vs_direct: start to result of a one-shot child through
// Arbor (`subagents.start` → its result: the child's session, the program's process group, its
// lines mapped into the log) ÷ running the same program with the same command line,
// environment and prompt directly (spawn → exit, stdout read), both on the same loopback model
// server. Runs alternate so both halves see the same machine load; medians.
//
// remote.map.vs_parse: 10k recorded lines of each program mapped into validated session events
// (the drivers' own line handlers and the one sink, over a session writer without a store, so
// disk writes do not dominate, with one listener standing in for a store's, so each event's
// copy out is paid, read the way `runProgram` reads them) ÷ `JSON.parse` of the same lines, in
// paired rounds (decision 0118): each round maps and parses once, in alternating order, and a
// format's ratio is the median of its rounds' ratios; the worse format is the figure.
//
// remote.no_orphans: 20 children cancelled mid-run (a program that spawns a child of its own
// and ignores SIGINT and SIGTERM, so every stop goes to SIGKILL of the group); the figure is 1
// when no process of any of their groups is left, else 0.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SessionWriter } from '../src/core/agent/session-writer';
import { newSessionId } from '../src/core/harness';
import { claudeHandlers, claudeInvocation } from '../src/core/remote/claude';
import { codexHandlers, codexInvocation } from '../src/core/remote/codex';
import { type LineHandlers, mapLine, type StreamState } from '../src/core/remote/run';
import type { ProgramSettings } from '../src/core/remote/settings';
import { SessionSink } from '../src/core/remote/sink';
import { remotePrompt } from '../src/core/remote/turn';
import { Session } from '../src/core/session/session';
import { FAKE_CODEX } from '../test/remote/fake-codex';
import { CLAUDE_BIN, CODEX_BIN, groupAlive, programHome, remoteSettings } from '../test/remote/world';
import { makeHarness } from '../test/support/harness';
import { ModelServer } from '../test/support/model-server';
import { bootstrapInterval } from './paired';
import { type BenchOptions, type Figure, type FigureSpec, fmt, median, missed, now, timeProcess } from './support';

export const name = 'remote';

const CODEX_VS_DIRECT: FigureSpec = { id: 'remote.codex.vs_direct', op: '<=', target: 1.15 };
const CLAUDE_VS_DIRECT: FigureSpec = { id: 'remote.claude.vs_direct', op: '<=', target: 1.15 };
const MAP_VS_PARSE: FigureSpec = { id: 'remote.map.vs_parse', op: '<=', target: 3 };
const NO_ORPHANS: FigureSpec = { id: 'remote.no_orphans', op: '>=', target: 1 };
export const figures: readonly FigureSpec[] = [CODEX_VS_DIRECT, CLAUDE_VS_DIRECT, MAP_VS_PARSE, NO_ORPHANS];

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const out: Figure[] = [];
  out.push(await guarded(CODEX_VS_DIRECT, () => vsDirect(opts, 'codex')));
  out.push(await guarded(CLAUDE_VS_DIRECT, () => vsDirect(opts, 'claude')));
  out.push(await guarded(MAP_VS_PARSE, () => mapVsParse(opts)));
  out.push(await guarded(NO_ORPHANS, () => noOrphans(opts)));
  return out;
}

/** One figure's failure is its MISS with the reason; the others still run. */
async function guarded(spec: FigureSpec, fn: () => Promise<Figure>): Promise<Figure> {
  try {
    return await fn();
  } catch (err) {
    return missed(spec, err instanceof Error ? err.message : String(err));
  }
}

// ---------------------------------------------------------------------------
// through Arbor vs directly

const PROGRAMS = {
  codex: { spec: CODEX_VS_DIRECT, bin: CODEX_BIN, provider: 'codex', settings: 'codex' },
  claude: { spec: CLAUDE_VS_DIRECT, bin: CLAUDE_BIN, provider: 'claude-code', settings: 'claudeCode' },
} as const;

const TASK = 'Answer in one sentence: what is a process group?';
const ANSWER = 'A process group is a set of processes that receive the same signals, so a whole program can be stopped at once.';

async function vsDirect(opts: BenchOptions, which: keyof typeof PROGRAMS): Promise<Figure> {
  const p = PROGRAMS[which];
  if (!fs.existsSync(p.bin)) return missed(p.spec, `${p.bin} is not installed (run npm run setup:remote)`);
  const server = await ModelServer.start();
  server.setFallback(() => ({ text: ANSWER }));
  const homes = { codex: programHome('bench-codex'), claude: programHome('bench-claude') };
  const settings = remoteSettings(server, homes);
  const t = await makeHarness(server, { remote: settings });
  try {
    const root = await t.h.createSession();
    const program = settings[p.settings] as ProgramSettings;
    let prompt = TASK;
    const viaArbor = async (): Promise<number> => {
      const t0 = now();
      const run = await t.h.subagents.start(root, p.provider, { prompt: TASK });
      const r = await run.result;
      const ms = now() - t0;
      if (r.stopReason !== 'completed') throw new Error(`the ${which} child ended ${r.stopReason}: ${r.error ?? ''}`);
      // The direct run gets exactly what the program was asked (the delegation notice, then the task).
      prompt = remotePrompt((await t.h.store.inspect(run.id)).events, TASK);
      await run.dispose();
      return ms;
    };
    const direct = async (): Promise<number> => {
      const ctx = { cwd: t.workspace, sandbox: 'workspace-write' as const, prompt };
      const { args, env } = which === 'codex' ? codexInvocation(program, ctx) : claudeInvocation(program, ctx);
      const { ms, code, stdout } = await timeProcess(p.bin, args, { env, cwd: t.workspace });
      if (code !== 0 || !stdout.includes(ANSWER.slice(0, 30))) throw new Error(`${which} run directly exited ${code} without the answer`);
      return ms;
    };
    // Warm both: the program's version probe (once per command), its files in the page cache.
    await viaArbor();
    await direct();
    const n = opts.quick ? 3 : 5;
    const arbor: number[] = [];
    const plain: number[] = [];
    for (let i = 0; i < n; i++) {
      arbor.push(await viaArbor());
      plain.push(await direct());
    }
    opts.note(`${which}: through Arbor ${fmt(median(arbor))} ms vs directly ${fmt(median(plain))} ms (medians of ${n}, alternating)`);
    return { ...p.spec, value: median(arbor) / median(plain) };
  } finally {
    await t.cleanup();
    await server.stop();
    fs.rmSync(homes.codex, { recursive: true, force: true });
    fs.rmSync(homes.claude, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------
// mapping recorded lines vs parsing them

const LINES = 10_000;

/** What `grep -rn … | head -<n>` prints: the output the recorded commands above would give. */
function grepOutput(n: number): string {
  let out = '';
  for (let k = 0; k < n; k++)
    out += `src/core/remote/process.ts:${190 + 3 * k}:    if (!this.child.pid) return false; // the group of the program, line ${k}\n`;
  return out;
}

/** What `codex exec --json` prints for a turn of shell calls and messages (shapes as recorded from 0.171.0). */
function codexLines(n: number): string[] {
  const lines = [JSON.stringify({ type: 'thread.started', thread_id: '0199a3b1-6c1e-7d52-9f0b-3c2d1e0f4a5b' }), JSON.stringify({ type: 'turn.started' })];
  for (let i = 0; lines.length < n - 1; i++) {
    const command = `/bin/bash -lc 'grep -rn "process group" src/core/remote | head -${(i % 20) + 1}'`;
    lines.push(
      JSON.stringify({ type: 'item.completed', item: { id: `item_${4 * i}`, type: 'reasoning', text: `**Looking for the group handling** (step ${i})` } }),
    );
    lines.push(
      JSON.stringify({
        type: 'item.started',
        item: { id: `item_${4 * i + 1}`, type: 'command_execution', command, aggregated_output: '', exit_code: null, status: 'in_progress' },
      }),
    );
    lines.push(
      JSON.stringify({
        type: 'item.completed',
        item: {
          id: `item_${4 * i + 1}`,
          type: 'command_execution',
          command,
          aggregated_output: grepOutput((i % 20) + 1),
          exit_code: 0,
          status: 'completed',
        },
      }),
    );
    lines.push(
      JSON.stringify({
        type: 'item.completed',
        item: { id: `item_${4 * i + 2}`, type: 'agent_message', text: `Step ${i}: the group is killed with SIGKILL after the grace period.` },
      }),
    );
  }
  lines.push(JSON.stringify({ type: 'turn.completed', usage: { input_tokens: 182_000, cached_input_tokens: 150_000, output_tokens: 9_000 } }));
  return lines.slice(0, n);
}

/** What `claude -p --output-format stream-json --verbose --include-partial-messages` prints (shapes as recorded from 2.1.332). */
function claudeLines(n: number): string[] {
  const session_id = '5b0e3a9c-2f1d-4c8e-9a7b-6d5e4f3a2b1c';
  const lines = [
    JSON.stringify({
      type: 'system',
      subtype: 'init',
      session_id,
      model: 'claude-sonnet-4-5',
      claude_code_version: '2.1.332',
      cwd: '/work',
      tools: ['Bash', 'Read', 'Edit'],
    }),
  ];
  const ev = (event: object) => JSON.stringify({ type: 'stream_event', event, session_id, parent_tool_use_id: null, uuid: 'u' });
  for (let i = 0; lines.length < n - 1; i++) {
    const text = `Step ${i}: I will look at how the group is stopped.`;
    lines.push(ev({ type: 'message_start', message: { id: `msg_${i}`, model: 'claude-sonnet-4-5', usage: { input_tokens: 10 } } }));
    lines.push(ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }));
    for (const piece of text.match(/.{1,12}/g) ?? []) lines.push(ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: piece } }));
    lines.push(ev({ type: 'content_block_stop', index: 0 }));
    lines.push(ev({ type: 'message_stop' }));
    const id = `toolu_${i}`;
    lines.push(
      JSON.stringify({
        type: 'assistant',
        message: {
          id: `msg_${i}`,
          model: 'claude-sonnet-4-5',
          role: 'assistant',
          content: [
            { type: 'text', text },
            { type: 'tool_use', id, name: 'Bash', input: { command: `grep -rn "SIGKILL" src | head -${(i % 20) + 1}`, description: 'Find the kill' } },
          ],
          usage: { input_tokens: 10, cache_read_input_tokens: 9000, output_tokens: 40 },
        },
        parent_tool_use_id: null,
        session_id,
      }),
    );
    lines.push(
      JSON.stringify({
        type: 'user',
        message: {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: id, content: grepOutput((i % 20) + 1), is_error: false }],
        },
        parent_tool_use_id: null,
        session_id,
      }),
    );
  }
  lines.push(
    JSON.stringify({
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: 'done',
      stop_reason: 'end_turn',
      session_id,
      total_cost_usd: 0.42,
      usage: { input_tokens: 4000, cache_read_input_tokens: 150_000, cache_creation_input_tokens: 2000, output_tokens: 9000 },
    }),
  );
  return lines.slice(0, n);
}

/** A running child's session as the runtime has it at a remote turn's start, with no store behind it. */
function turnWriter(): SessionWriter {
  const s = Session.create({ id: newSessionId(), createdAt: new Date().toISOString(), origin: 'user', delegationDepth: 0 });
  const w = new SessionWriter(s, null);
  w.stage({ type: 'inbox/accepted', messageId: 'm1', text: TASK, source: { kind: 'user' } });
  w.stage({ type: 'inbox/claimed', messageId: 'm1' });
  w.stage({ type: 'turn/start', turnId: 't1' });
  w.stage({ type: 'user/message', text: TASK, source: { kind: 'user' }, messageId: 'm1' });
  return w;
}

async function mapAll(lines: readonly string[], handlers: () => LineHandlers, prefix: string): Promise<number> {
  const w = turnWriter();
  const sink = new SessionSink(w, prefix, 'bench-model', () => undefined);
  const st: StreamState = { errors: [], proc: { pid: 4242, identity: { pgid: 4242 } } };
  // Production's writer has a store, and `write` copies each event for the store's staged
  // listeners (decision 0118); this one has none (no disk writes), so a listener stands in for
  // them: the figure pays that copy as every remote child does.
  w.onEvent(() => undefined);
  const h = handlers();
  // As `runProgram` reads a stream: a line waits only for a handler that writes (decision 0106).
  for (const l of lines) {
    const writing = mapLine(l, h, st, sink);
    if (writing) await writing;
  }
  await sink.finish();
  w.stage({ type: 'turn/end', turnId: 't1', stopReason: st.final?.stopReason ?? 'error' });
  return w.session.events.length;
}

async function mapVsParse(opts: BenchOptions): Promise<Figure> {
  const formats = [
    { name: 'codex', lines: codexLines(LINES), handlers: () => codexHandlers('codex-cli 0.171.0'), prefix: 'codex' },
    { name: 'claude', lines: claudeLines(LINES), handlers: () => claudeHandlers('2.1.332 (Claude Code)'), prefix: 'claude' },
  ];
  // Paired rounds (decision 0118): a load spike falls on one round's pair, not on one side's median.
  const rounds = opts.quick ? 30 : 60;
  let worst = 0;
  for (const f of formats) {
    const mapMs: number[] = [];
    const parseMs: number[] = [];
    let events = 0;
    let sinkHole = 0;
    const map = async (): Promise<number> => {
      const t0 = now();
      events = await mapAll(f.lines, f.handlers, f.prefix);
      return now() - t0;
    };
    const parse = (): number => {
      const t0 = now();
      for (const l of f.lines) sinkHole += (JSON.parse(l) as { type: string }).type.length;
      return now() - t0;
    };
    for (let r = 0; r < rounds + 2; r++) {
      // Alternating which goes first, so neither always pays the other's garbage.
      let m: number;
      let p: number;
      if (r % 2 === 0) {
        m = await map();
        p = parse();
      } else {
        p = parse();
        m = await map();
      }
      if (r >= 2) {
        mapMs.push(m);
        parseMs.push(p);
      }
    }
    const ratioOf = (rs: readonly number[]) => median(rs.map((r) => mapMs[r] / parseMs[r]));
    const ratio = ratioOf(mapMs.map((_, r) => r));
    const [low, high] = bootstrapInterval(rounds, ratioOf);
    opts.note(
      `${f.name}: ${f.lines.length} lines (${fmt(f.lines.reduce((a, l) => a + l.length, 0) / 1e6)} MB) → ${events} events in ${fmt(median(mapMs))} ms vs JSON.parse ${fmt(median(parseMs))} ms (×${fmt(ratio)}, 90 % interval ${fmt(low)}–${fmt(high)}; median of ${rounds} paired rounds)`,
    );
    if (sinkHole === 0) throw new Error('the parsed lines had no types'); // keeps the parse loop from being optimised away
    worst = Math.max(worst, ratio);
  }
  return { ...MAP_VS_PARSE, value: worst };
}

// ---------------------------------------------------------------------------
// cancels leave nothing behind

async function noOrphans(opts: BenchOptions): Promise<Figure> {
  const home = programHome('bench-fake');
  const fake = path.join(home, 'fake-codex');
  fs.writeFileSync(fake, FAKE_CODEX, { mode: 0o755 });
  const server = await ModelServer.start();
  const t = await makeHarness(server, { remote: { codex: { command: fake, env: { FAKE_MODE: 'family' }, graceMs: 200 } } });
  const cancels = 20;
  const groups: number[] = [];
  let notInterrupted = 0;
  const t0 = now();
  try {
    const root = await t.h.createSession();
    for (let i = 0; i < cancels; i++) {
      const run = await t.h.subagents.start(root, 'codex', { prompt: `cancel me ${i}` });
      let pgid: number | undefined;
      for (let k = 0; k < 1000 && pgid === undefined; k++) {
        pgid = t.h.resident(run.id)?.session.events.find((e) => e.type === 'subagent/remote')?.pgid;
        if (pgid === undefined) await new Promise((r) => setTimeout(r, 10));
      }
      if (pgid === undefined) throw new Error(`child ${i} never reported its process group`);
      groups.push(pgid);
      await t.h.interruptSubtree(run.id);
      const r = await run.result;
      if (r.stopReason !== 'interrupted') notInterrupted++;
      await run.dispose();
    }
  } finally {
    await t.cleanup();
    await server.stop();
    fs.rmSync(home, { recursive: true, force: true });
  }
  const left = groups.filter(groupAlive).length;
  opts.note(
    `no_orphans: ${cancels} cancels in ${fmt((now() - t0) / 1000)} s, ${left} of ${groups.length} groups still had a process, ${notInterrupted} did not end interrupted`,
  );
  if (notInterrupted > 0) return missed(NO_ORPHANS, `${notInterrupted} of ${cancels} cancelled children did not end interrupted`);
  return { ...NO_ORPHANS, value: left === 0 ? 1 : 0 };
}
