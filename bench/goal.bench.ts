// goal.round.vs_turn: what a goal round costs ÷ what a human turn costs, with a zero-latency
// model (the real test server through the real client). A round is the interval between two
// consecutive round starts of an armed goal (the driver's idle callback, its goal/change, the
// round's message and the turn); a human turn the interval between two consecutive turn starts
// of a loop that sends the next message as soon as the agent is idle. Blocks of each alternate
// so both halves see the same machine load.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Harness } from '../src/core/harness';
import { OpenAICompatibleClient } from '../src/core/model/openai-client';
import { onEvents } from '../test/support/changes';
import { ModelServer } from '../test/support/model-server';
import { type BenchOptions, type Figure, type FigureSpec, fmt, median, now, tempDir } from './support';

export const name = 'goal';

const VS_TURN: FigureSpec = { id: 'goal.round.vs_turn', op: '<=', target: 1.2 };
export const figures: readonly FigureSpec[] = [VS_TURN];

/** Intervals between consecutive `turn/start`s of one session. */
function intervals(starts: number[]): number[] {
  return starts.slice(1).map((t, i) => t - starts[i]);
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const server = await ModelServer.start();
  server.setFallback(() => ({ text: 'done' }));
  const dir = tempDir('arbor-bench-goal-');
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(ws);
  const client = new OpenAICompatibleClient({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 });
  const h = await Harness.open({
    storeDir: path.join(dir, 'store'),
    workspace: [ws],
    model: { client, name: 'bench' },
    sandbox: 'workspace-write',
    approval: 'never',
  });
  const starts = new Map<string, number[]>();
  onEvents(h, (id, e) => {
    if (e.type === 'turn/start') starts.get(id)?.push(now());
  });
  const blocks = opts.quick ? 3 : 6;
  const perBlock = 60;
  const turnMs: number[] = [];
  const roundMs: number[] = [];
  let turnSyncs = 0;
  let roundSyncs = 0;
  try {
    const human = await h.createSession();
    const goal = await h.createSession();
    for (let b = 0; b < blocks; b++) {
      server.reset();
      starts.set(human.id, []);
      const s0 = h.store.stats().syncs;
      for (let i = 0; i < perBlock; i++) {
        await human.accept(`turn ${b}.${i}`);
        await human.idle();
      }
      const s1 = h.store.stats().syncs;
      starts.set(goal.id, []);
      await h.goals.set(goal.id, `objective ${b}`, perBlock);
      await h.settle();
      turnSyncs += s1 - s0;
      roundSyncs += h.store.stats().syncs - s1;
      // The first interval of each block warms up (a new goal, a new block).
      turnMs.push(...intervals(starts.get(human.id)!).slice(1));
      roundMs.push(...intervals(starts.get(goal.id)!).slice(1));
    }
    const value = median(roundMs) / median(turnMs);
    // What a round writes beside a turn (its goal/change): each event is a durable append, and the
    // driver issues the goal/change and the round's message together so one group commit can cover both.
    const perTurn = (await h.store.inspect(human.id)).events.length / (blocks * perBlock);
    const perRound = (await h.store.inspect(goal.id)).events.length / (blocks * perBlock);
    opts.note(`events written: ${fmt(perRound)} per goal round vs ${fmt(perTurn)} per human turn (the round's goal/change, plus each goal set)`);
    // Decision 0083: a round is judged when its turn opens, so its goal/change and message share the
    // turn's first commit; a round pays what a human turn pays (plus each block's set and its block).
    opts.note(
      `fdatasyncs: ${fmt(roundSyncs / (blocks * perBlock))} per goal round vs ${fmt(turnSyncs / (blocks * perBlock))} per human turn (each block's goal set and its round-limit block included)`,
    );
    // The rest is bytes: each round's message carries the objective (and how to report, in a run's first round; decision
    // 0029), the human's is `turn b.i`, so the goal session's requests grow faster; the model
    // server parses and prefix-hashes every byte of every request on this event loop.
    const sent = async (id: string) => median((await h.store.inspect(id)).events.flatMap((e) => (e.type === 'request/header' ? [e.bytes] : [])));
    opts.note(
      `request bytes (median): ${fmt(await sent(goal.id))} per goal round vs ${fmt(await sent(human.id))} per human turn (a round's message is the objective, and how to report in a run's first round; the human's a few characters)`,
    );
    opts.note(
      `goal round ${fmt(median(roundMs))} ms vs human turn ${fmt(median(turnMs))} ms (medians of ${roundMs.length} / ${turnMs.length} intervals, ${blocks} alternating blocks)`,
    );
    return [{ ...VS_TURN, value }];
  } finally {
    await h.close();
    await server.stop();
  }
}
