// agent.turn.vs_request: one turn with a zero-latency model (the real test server through the
// real `openai`-based client) ÷ the bare streamed request of the same bytes through the same
// client and server. Each turn is paired with a bare replay of the request it just sent, so
// both halves of a ratio see the same machine load; the absolute milliseconds move with that
// load and are printed only as context.
//
// The figure is the whole turn, as the issue defines it: its wait for its durable appends
// (two fdatasyncs with group commit, decision 0063; seven before) included. That wait follows the disk's contention more than the CPU
// load a bare request sees, so the turn minus its durable appends is printed beside it as a
// context line: the runtime's own cost, and how much of a MISS is the disk.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Harness } from '../src/core/harness';
import { OpenAICompatibleClient } from '../src/core/model/openai-client';
import { type ChatBody, ModelServer } from '../test/support/model-server';
import { PREFIX_CACHE_HIT, prefixCacheHit } from './agent-prefix';
import { STEP_SCALE, stepScale } from './agent-step';
import { DiskWait, FsyncProbe } from './disk-wait';
import { type BenchOptions, type Figure, type FigureSpec, fmt, median, now, tempDir } from './support';
import { bareRequestMs, TimedClient } from './timed-client';
import { floorVerdict } from './verdicts';

export const name = 'agent';

const VS_REQUEST: FigureSpec = { id: 'agent.turn.vs_request', op: '<=', target: 1.5 };
export const figures: readonly FigureSpec[] = [VS_REQUEST, PREFIX_CACHE_HIT, STEP_SCALE];

/** The last message is a tool result: answer; otherwise ask for one read_file step. */
const toolStep = (body: ChatBody) =>
  body.messages.at(-1)?.role === 'tool' ? { text: 'done' } : { toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] };

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const server = await ModelServer.start();
  const dir = tempDir('arbor-bench-agent-');
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(ws, 'a.txt'), 'hello\n');
  const client = new TimedClient(new OpenAICompatibleClient({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 }));
  const h = await Harness.open({
    storeDir: path.join(dir, 'store'),
    workspace: [ws],
    model: { client, name: 'bench' },
    sandbox: 'workspace-write',
    approval: 'never',
  });
  const disk = new DiskWait();
  disk.wrap(h.store, 'append');
  const warmup = 10;
  const turns = opts.quick ? 120 : 400;
  // The figure: a plain turn (one model call, no tools). A context line gives a turn with a
  // tool step (two requests, paired with one), whose extra time includes the tool's file I/O.
  const measure = async (label: string, withTool: boolean): Promise<number> => {
    server.setFallback((body) => (withTool ? toolStep(body) : { text: 'done' }));
    server.reset();
    const agent = await h.createSession();
    const turnMs: number[] = [];
    const diskMs: number[] = [];
    const bareMs: number[] = [];
    let model = 0;
    let syncs = 0;
    const probe = new FsyncProbe(dir); // beside the store, on its file system, never in its folder
    for (let i = 0; i < warmup + turns; i++) {
      if (i === warmup) syncs = h.store.stats().syncs;
      client.modelMs = 0;
      disk.take();
      const t = now();
      await agent.accept(`turn ${i}`);
      await agent.idle();
      const turn = now() - t;
      const onDisk = disk.take();
      const req = client.lastRequest;
      if (!req) throw new Error('the turn sent no model request');
      // The same bytes again, bare, right after: the turn's partner under the same load.
      const bare = await bareRequestMs(client.inner, req);
      if (i < warmup) continue;
      turnMs.push(turn);
      diskMs.push(onDisk);
      bareMs.push(bare);
      model += client.modelMs;
      await probe.sample(bare);
    }
    const ratio = median(turnMs.map((t, i) => (t - diskMs[i]) / bareMs[i]));
    const whole = median(turnMs.map((t, i) => t / bareMs[i]));
    const fsync = probe.close();
    opts.note(
      `${label}: (turn − durable appends) ÷ bare request ${fmt(ratio)}, whole turn ÷ bare request ${fmt(whole)} (medians of ${turns} pairs); ` +
        `per turn ${fmt(sum(turnMs) / turns)} ms = ${fmt(model / turns)} model + ${fmt(sum(diskMs) / turns)} durable appends + ${fmt((sum(turnMs) - model - sum(diskMs)) / turns)} runtime; ` +
        `bare request ${fmt(sum(bareMs) / turns)} ms; ${fmt((h.store.stats().syncs - syncs) / turns)} commits per turn (an fdatasync each), ${fmt(sum(diskMs) / Math.max(1, h.store.stats().syncs - syncs))} ms each from append to durable, ` +
        `a bare commit ${fmt(fsync.viaPool)} ms (the floor: a turn waits for two, its facts before the request and its reply with turn/end; decision 0063) (${agent.session.length} events)` +
        (withTool ? '' : floorVerdict(VS_REQUEST, ratio, sum(bareMs) / turns, (h.store.stats().syncs - syncs) / turns, sum(diskMs) / turns, fsync)),
    );
    return whole;
  };
  try {
    const plain = await measure('plain turn', false);
    await measure('turn with a read_file step', true);
    return [{ ...VS_REQUEST, value: plain }, await prefixCacheHit(opts), await stepScale(opts)];
  } finally {
    await h.close();
    await server.stop();
  }
}
