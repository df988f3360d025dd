// agent.turn.overhead_ms: what the runtime adds to a turn beyond the model call and the
// durable appends, with a zero-latency model (the real test server through the real client).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Harness } from '../src/core/harness';
import { OpenAICompatibleClient } from '../src/core/model/openai-client';
import { ModelServer } from '../test/support/model-server';
import { TimedClient } from './timed-client';
import { type BenchOptions, type Figure, fmt, median, now, tempDir } from './support';

export const name = 'agent';


export async function run(opts: BenchOptions): Promise<Figure[]> {
  const server = await ModelServer.start();
  const dir = tempDir('arbor-bench-agent-');
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(ws, 'a.txt'), 'hello\n');
  const client = new TimedClient(new OpenAICompatibleClient({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 }));
  const h = await Harness.open({ storeDir: path.join(dir, 'store'), workspace: [ws], model: { client, name: 'bench' }, sandbox: 'workspace-write', approval: 'never' });
  // Time the durable appends too, so only the runtime's own work is left.
  let appendMs = 0;
  const store = h.store;
  const append = store.append.bind(store);
  store.append = async (id, evs) => {
    const t = now();
    try {
      return await append(id, evs);
    } finally {
      appendMs += now() - t;
    }
  };
  const rounds = opts.quick ? 3 : 7;
  const turns = opts.quick ? 40 : 100;
  // The figure: a plain turn (one model call, no tools). A context line gives a turn with a
  // tool step, whose extra time includes the tool's own file I/O.
  const measure = async (label: string, withTool: boolean): Promise<number> => {
    server.setFallback((_body, i) => (withTool && i % 2 === 0 ? { toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] } : { text: 'done' }));
    server.reset();
    const agent = await h.createSession();
    const perRound: number[] = [];
    for (let r = 0; r < rounds + 1; r++) {
      client.modelMs = 0;
      appendMs = 0;
      const t = now();
      for (let i = 0; i < turns; i++) {
        await agent.accept(`turn ${i}`);
        await agent.idle();
      }
      const total = now() - t;
      if (r > 0) perRound.push((total - client.modelMs - appendMs) / turns); // round 0 warms up
      if (r === rounds)
        opts.note(`${label}: ${fmt(total / turns)} ms total, ${fmt(client.modelMs / turns)} ms model, ${fmt(appendMs / turns)} ms durable appends, ${fmt(median(perRound))} ms runtime per turn (${agent.session.length} events)`);
    }
    return median(perRound);
  };
  const plain = await measure('plain turn', false);
  await measure('turn with a read_file step', true);
  await h.close();
  await server.stop();
  return [{ id: 'agent.turn.overhead_ms', value: plain, op: '<=', target: 1 }];
}
