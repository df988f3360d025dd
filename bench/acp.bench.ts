// acp.serve.vs_inprocess: a warm prompt round trip to `arbor acp` (a real child process, the
// SDK's client over its stdio: session/prompt out, the streamed updates and the answer back)
// ÷ the same turn in an in-process harness (accept, then settle), both on the zero-latency
// test model server. Each round runs a prompt, a turn and a no-work request in an order rotating
// through all six, and the figure is the median of the rounds' ratios (decision 0116): blocks of
// fifteen apiece let a load spike fall on one side's block and read 0.51–1.87 within the hour. The
// model server runs in a process of its own, as a model always does: were it in the bench's
// process, the in-process turn would never wait for another process to be scheduled while the
// ACP one would, and on a loaded machine that wait, not Arbor, would be the figure.
//
// Warm means both sides' code is compiled (decision 0087): each first runs JIT_WARM turns on a
// session of its own. With five warm prompts the figure compared a child V8 was still compiling
// (twice the CPU of its steady turn) against this process's turn code, hot from earlier modules.
//
// Its context line says where the rest goes (decision 0084): a request the agent answers with
// no work (`initialize`), timed in the same rounds, is the round trip's own cost (the two hops and
// the SDK's work on both ends); the agent's CPU per prompt (from /proc) beside the in-process
// turn's shows whether the agent does more than the turn. Neither enters the figure.
//
// acp.serve.bytes_per_token: the bytes of `session/update` lines `arbor acp` writes to stdout
// per streamed token, for a reply streamed one token (four characters) per chunk, a chunk
// every 2 ms (a fast real model): what the coalescing saves a client over one notification
// per token.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as acp from '@agentclientprotocol/sdk/unstable';
import { Harness } from '../src/core/harness';
import { OpenAICompatibleClient } from '../src/core/model/openai-client';
import { startAcp } from '../test/support/acp-peer';
import { ModelServer } from '../test/support/model-server';
import { bootstrapInterval, orders } from './paired';
import { type BenchOptions, type Figure, type FigureSpec, fmt, median, modelProcess, now, tempDir } from './support';

export const name = 'acp';

const VS_INPROCESS: FigureSpec = { id: 'acp.serve.vs_inprocess', op: '<=', target: 1.3 };
const BYTES_PER_TOKEN: FigureSpec = { id: 'acp.serve.bytes_per_token', op: '<=', target: 200 };
export const figures: readonly FigureSpec[] = [VS_INPROCESS, BYTES_PER_TOKEN];

/** Turns each side runs before it is measured, on a session of its own: enough for V8 to have compiled a fresh agent's code to its steady state (decision 0087: 150 left it ~0.8 ms a prompt short of it). */
const JIT_WARM = 600;

const REPLY = 'The answer, in a sentence of about forty tokens, streamed the way a model streams it. '.repeat(2);

/**
 * CPU time of a process so far, ms: the sum of its threads' run time (Linux `schedstat` of each of `/proc/<pid>/task`, nanoseconds),
 * else its user and system time (`/proc/<pid>/stat`, 10 ms ticks: too coarse for a window of one request); 0 elsewhere.
 */
function cpuOf(pid: number | undefined): number {
  try {
    let ns = 0;
    for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(fs.readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0]);
      } catch {
        // (a thread that ended meanwhile)
      }
    }
    return ns / 1e6;
  } catch {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(f[11]) + Number(f[12])) * 10;
    } catch {
      return 0;
    }
  }
}

/**
 * What a miss is made of, from the same runs: the round trip alone, or the served prompt's time
 * beyond the turn and the round trip, set against the CPU the serving adds (the warm agent's
 * beyond the turn's, and the client's); what the CPU does not explain is waiting to be scheduled
 * (a prompt wakes two more processes than the turn does, and a loaded machine makes each wait).
 */
function missClause(ratio: number, rest: number, beyondMs: number, agentExtraMs: number, clientMs: number): string {
  if (ratio <= VS_INPROCESS.target) return '';
  if (rest <= VS_INPROCESS.target) return '; what misses is the round trip (two process hops, the SDK at both ends), not the served turn';
  return (
    `; what misses is the served turn: beyond the round trip it takes ${fmt(beyondMs)} ms more than the in-process turn, against ` +
    `${fmt(agentExtraMs)} ms of the warm agent's CPU beyond the turn's (its two stdout writes, the SDK reading and checking each request, ` +
    `a heap and threads of its own: 0.4–0.7 ms in long warm runs) and ${fmt(clientMs)} ms of the client's; the rest is waiting to be ` +
    `scheduled at load ${fmt(os.loadavg()[0])} on ${os.cpus().length} cores. The floor (the round trip, ~0.5 ms of the agent's CPU, the part of the client's not overlapped) is ~1.2–1.35 over a 5 ms turn on a quiet machine`
  );
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const model = await modelProcess(REPLY);
  const server = await ModelServer.start();
  const dir = tempDir('arbor-bench-acp-');
  const wsAcp = path.join(dir, 'ws-acp');
  const wsIn = path.join(dir, 'ws-in');
  fs.mkdirSync(wsAcp);
  fs.mkdirSync(wsIn);
  const peer = await startAcp(['--store', path.join(dir, 'store-acp'), '--workspace', wsAcp, '--base-url', model.baseURL, '--model', 'bench']);
  // The stream for bytes per token is scripted per reply: a second agent on an in-process server.
  const streamer = await startAcp(['--store', path.join(dir, 'store-bytes'), '--workspace', wsAcp, '--base-url', server.baseURL, '--model', 'bench']);
  const client = new OpenAICompatibleClient({ baseURL: model.baseURL, apiKey: 'k', maxRetries: 0 });
  const h = await Harness.open({
    storeDir: path.join(dir, 'store-in'),
    workspace: [wsIn],
    model: { client, name: 'bench' },
    sandbox: 'workspace-write',
    approval: 'never',
  });
  try {
    const { sessionId } = await peer.agent.request(acp.methods.agent.session.new, { cwd: wsAcp, mcpServers: [] });
    const local = await h.createSession();
    const prompt = (i: number) => peer.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: `turn ${i}` }] });
    const rounds = opts.quick ? 60 : 240;
    const acpMs: number[] = [];
    const inMs: number[] = [];
    const pingMs: number[] = [];
    let clientCpu = 0;
    let pingCpu = 0;
    let inCpu = 0;
    const ping = () =>
      peer.agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { name: 'bench', version: '1' },
      });
    // Warm code on both sides (decision 0087): a fresh child runs its first ~100 prompts at up to
    // twice its steady CPU (V8 compiling on its other threads), while this process's turn code is
    // already hot after earlier modules. Each side runs JIT_WARM turns on a session of its own, so
    // the measured sessions' histories (and so the work of their turns) stay as short as before.
    const warmAcp = (await peer.agent.request(acp.methods.agent.session.new, { cwd: wsAcp, mcpServers: [] })).sessionId;
    const warmLocal = await h.createSession();
    const a0 = cpuOf(peer.child.pid);
    for (let i = 0; i < JIT_WARM; i++)
      await peer.agent.request(acp.methods.agent.session.prompt, { sessionId: warmAcp, prompt: [{ type: 'text', text: `warm ${i}` }] });
    const agentWarmCpu = (cpuOf(peer.child.pid) - a0) / JIT_WARM;
    const w0 = process.cpuUsage();
    for (let i = 0; i < JIT_WARM; i++) {
      await warmLocal.accept(`warm ${i}`);
      await h.settle();
    }
    const w = process.cpuUsage(w0);
    const inWarmCpu = (w.user + w.system) / 1000 / JIT_WARM;
    for (let i = 0; i < 5; i++) {
      await prompt(i); // warm: the measured session's store file, the connection
      await local.accept(`warm ${i}`);
      await h.settle();
    }
    // Rounds of the three measures, their order rotating through all six (bench/paired.ts, decision 0116): each served
    // prompt is compared with the in-process turn of its own round, which the same moment's load slows alike.
    const sequences = orders(3);
    const c0 = cpuOf(peer.child.pid);
    for (let r = 0; r < rounds; r++) {
      for (const m of sequences[r % sequences.length]) {
        if (m === 0) {
          const k0 = process.cpuUsage();
          const t = now();
          await prompt(r);
          acpMs.push(now() - t);
          const k = process.cpuUsage(k0);
          clientCpu += (k.user + k.system) / 1000;
        } else if (m === 1) {
          const u0 = process.cpuUsage();
          const t = now();
          await local.accept(`turn ${r}`);
          await h.settle();
          inMs.push(now() - t);
          const u = process.cpuUsage(u0);
          inCpu += (u.user + u.system) / 1000;
        } else {
          // The agent's CPU for the no-work request, taken out of its whole below.
          const a0 = cpuOf(peer.child.pid);
          const t = now();
          await ping();
          pingMs.push(now() - t);
          pingCpu += cpuOf(peer.child.pid) - a0;
        }
      }
    }
    const agentCpu = cpuOf(peer.child.pid) - c0 - pingCpu;
    const perRound = (rs: readonly number[]) => median(rs.map((i) => acpMs[i] / inMs[i]));
    const ratio = perRound(acpMs.map((_, i) => i));
    const [low, high] = bootstrapInterval(rounds, perRound);
    const rest = median(acpMs.map((a, i) => (a - pingMs[i]) / inMs[i]));
    opts.note(
      `acp prompt ${fmt(median(acpMs))} ms vs in-process turn ${fmt(median(inMs))} ms (medians of ${rounds}; the figure is the median of the ${rounds} rounds' ratios, ` +
        `each round a prompt, a turn and a no-work request in rotating order, decision 0116; its 90% bootstrap interval ${fmt(low)}–${fmt(high)}); ` +
        `a request answered with no work round-trips in ${fmt(median(pingMs))} ms (the two hops and both ends' SDK): without it the figure is ${fmt(rest)}; ` +
        `CPU per prompt in the agent ${fmt(agentCpu / acpMs.length)} ms (in the client, this process's SDK, ${fmt(clientCpu / acpMs.length)} ms) vs ${fmt(inCpu / inMs.length)} ms for the in-process turn, ` +
        `after ${JIT_WARM} warming turns each on a session of its own (those cost the fresh agent ${fmt(agentWarmCpu)} ms of CPU apiece, V8 compiling its code, and this process ${fmt(inWarmCpu)} ms)` +
        missClause(ratio, rest, median(acpMs) - median(pingMs) - median(inMs), agentCpu / acpMs.length - inCpu / inMs.length, clientCpu / acpMs.length),
    );

    // Bytes per token: one reply streamed a token per chunk, the notifications counted on stdout.
    const chunkSize = 4;
    const tokens = Math.ceil(REPLY.length / chunkSize);
    const runs = opts.quick ? 3 : 6;
    const streamed = (await streamer.agent.request(acp.methods.agent.session.new, { cwd: wsAcp, mcpServers: [] })).sessionId;
    let bytes = 0;
    for (let r = 0; r < runs; r++) {
      server.enqueue({ text: REPLY, chunkSize, chunkDelayMs: 2 });
      const from = streamer.lines.length;
      await streamer.agent.request(acp.methods.agent.session.prompt, { sessionId: streamed, prompt: [{ type: 'text', text: `stream ${r}` }] });
      for (const l of streamer.lines.slice(from)) if (l.includes('"method":"session/update"')) bytes += Buffer.byteLength(l) + 1;
    }
    const perToken = bytes / (tokens * runs);
    opts.note(`${fmt(bytes / runs)} notification bytes per reply of ${tokens} tokens (${REPLY.length} characters)`);
    return [
      { ...VS_INPROCESS, value: ratio },
      { ...BYTES_PER_TOKEN, value: perToken },
    ];
  } finally {
    await peer.close();
    await streamer.close();
    await h.close();
    await server.stop();
    model.stop();
  }
}
