// Subagent figures: one-shot overhead, cold resume cost, fork prefix-cache reuse and
// request-head identity. The model is the real test server through the real client.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Harness, type HarnessConfig } from '../src/core/harness';
import { OpenAICompatibleClient } from '../src/core/model/openai-client';
import type { ModelClient } from '../src/core/model/types';
import type { RequestHeaderEvent, SessionEvent } from '../src/core/session/events';
import { ModelServer } from '../test/support/model-server';
import { TimedClient } from './timed-client';
import { type BenchOptions, type Figure, fmt, makeEvents, median, now, tempDir } from './support';

export const name = 'subagent';


async function open(server: ModelServer, client: ModelClient, dir: string, extra: Partial<HarnessConfig> = {}): Promise<Harness> {
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(ws, { recursive: true });
  return Harness.open({ storeDir: path.join(dir, 'store'), workspace: [ws], model: { client, name: 'bench' }, sandbox: 'workspace-write', approval: 'never', releaseDelayMs: 0, ...extra });
}

function timeAppends(h: Harness): { ms: number } {
  const acc = { ms: 0 };
  const counted =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const t = now();
      try {
        return await fn(...args);
      } finally {
        acc.ms += now() - t;
      }
    };
  h.store.append = counted(h.store.append.bind(h.store));
  h.store.createSession = counted(h.store.createSession.bind(h.store));
  return acc;
}

/** subagent.oneshot.overhead_ms: start + one turn + dispose of a one-shot child, beyond model and appends. */
async function oneShotOverhead(opts: BenchOptions, server: ModelServer): Promise<Figure> {
  const client = new TimedClient(new OpenAICompatibleClient({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 }));
  const h = await open(server, client, tempDir('arbor-bench-sub-'));
  const appends = timeAppends(h);
  server.setFallback(() => ({ text: 'child done' }));
  const parent = await h.createSession();
  const n = 200;
  const rounds = opts.quick ? 2 : 4;
  const per: number[] = [];
  for (let r = 0; r <= rounds; r++) {
    client.modelMs = 0;
    appends.ms = 0;
    const t = now();
    for (let i = 0; i < n; i++) {
      const run = await h.subagents.start(parent, 'spawn', { prompt: `task ${i}` });
      await run.result;
      await run.dispose();
    }
    const total = now() - t;
    if (r > 0) per.push((total - client.modelMs - appends.ms) / n);
    if (r === rounds) opts.note(`one-shot child: ${fmt(total / n)} ms total, ${fmt(client.modelMs / n)} ms model, ${fmt(appends.ms / n)} ms durable writes, resident after: ${h.residentCount}`);
  }
  await h.close();
  return { id: 'subagent.oneshot.overhead_ms', value: median(per), op: '<=', target: 2 };
}

/** subagent.resume.vs_parse: cold resume of a 10k-event child ÷ JSON.parse of its events' bytes. */
async function resumeVsParse(opts: BenchOptions, server: ModelServer): Promise<Figure> {
  const client = new OpenAICompatibleClient({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 });
  const dir = tempDir('arbor-bench-resume-');
  let h = await open(server, client, dir);
  const parent = await h.createSession();
  const childId = `${parent.id}.bench1`;
  const body = makeEvents(0, 10_000).map((e, i) => ({ ...e, seq: i + 2 }) as SessionEvent);
  const at = new Date().toISOString();
  const events: SessionEvent[] = [
    { seq: 0, at, type: 'subagent/descriptor', version: 2, mode: 'continuable', provider: 'spawn', label: 'big' },
    { seq: 1, at, type: 'user/message', text: 'You are a subagent.', source: { kind: 'delegation' } },
    ...body,
  ];
  await h.store.createSession({ id: childId, createdAt: at, origin: 'subagent', parentSession: parent.id, delegationDepth: 1 }, events);
  const bytes = JSON.stringify(events);
  await h.close();
  server.setFallback(() => ({ text: 'ok' }));
  const reps = opts.quick ? 3 : 7;
  const resume: number[] = [];
  const parse: number[] = [];
  for (let r = 0; r < reps; r++) {
    h = await open(server, client, dir); // the tree file is cold: not loaded until the follow-up
    const t = now();
    await h.subagents.followup(parent.id, childId, 'one more thing');
    resume.push(now() - t);
    await h.settle();
    await h.close();
    const t2 = now();
    JSON.parse(bytes);
    parse.push(now() - t2);
  }
  opts.note(`cold resume of a 10k-event child: ${fmt(median(resume))} ms (tree file load + inspect + composition + durable accept); JSON.parse of its ${fmt(bytes.length / 1048576)} MB: ${fmt(median(parse))} ms`);
  return { id: 'subagent.resume.vs_parse', value: median(resume) / median(parse), op: '<=', target: 3 };
}

/** fork.cache_hit_ratio, fork.head_identical, spawn.head_shared. */
async function forkFigures(opts: BenchOptions, server: ModelServer): Promise<Figure[]> {
  const client = new OpenAICompatibleClient({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 });
  const h = await open(server, client, tempDir('arbor-bench-fork-'));
  server.reset();
  const parent = await h.createSession();
  // ~20k tokens of history: 10 turns of ~8,000 characters (4 characters a token).
  const filler = (i: number) => `Turn ${i} analysis. `.padEnd(8000, 'lorem ipsum dolor sit amet ');
  for (let i = 0; i < 10; i++) {
    server.enqueue({ text: filler(i) });
    await parent.accept(`question ${i}`);
    await parent.idle();
  }
  server.enqueue({ toolCalls: [{ id: 'f1', name: 'subagent_fork', arguments: { prompt: 'FORK-TASK', label: 'fork' } }] }, { text: 'fork answer' }, { text: 'parent done' });
  await parent.accept('fork now');
  await h.settle();
  const childReq = server.requests.find((r) => r.body.messages.some((m) => m.content === 'FORK-TASK'))!;
  const seedLength = h.store.list().find((x) => x.origin === 'fork')!.seedLength!;
  const child = await h.store.inspect(h.store.list().find((x) => x.origin === 'fork')!.id);
  const inheritedMsgs = child.deriveMessages().filter((m) => m.seq < seedLength).length;
  const inherited = Math.ceil((JSON.stringify(childReq.body.tools ?? []) + JSON.stringify(childReq.body.messages.slice(0, 1 + inheritedMsgs))).length / 4);
  const ratio = childReq.cacheHitTokens / inherited;
  opts.note(`fork: inherited ~${inherited} tokens, cache hit ${childReq.cacheHitTokens} of ${childReq.promptTokens} prompt tokens`);
  const headOf = (evs: readonly SessionEvent[]) => (evs.find((e) => e.type === 'request/header') as RequestHeaderEvent | undefined)?.headHash;
  const parentHead = headOf(parent.session.events);
  const forkHead = headOf(child.events.slice(child.firstLiveSeq));

  // spawn: a one-shot child of the same parent.
  server.enqueue({ text: 'spawned answer' });
  const run = await h.subagents.start(parent, 'spawn', { prompt: 'SPAWN-TASK' });
  await run.result;
  const spawnHead = headOf(run.localAgent.session.events);
  await run.dispose();
  await h.close();
  return [
    { id: 'fork.cache_hit_ratio', value: ratio, op: '>=', target: 0.95 },
    { id: 'fork.head_identical', value: forkHead !== undefined && forkHead === parentHead ? 1 : 0, op: '>=', target: 1 },
    { id: 'spawn.head_shared', value: spawnHead !== undefined && spawnHead === parentHead ? 1 : 0, op: '>=', target: 1 },
  ];
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const server = await ModelServer.start();
  try {
    return [await oneShotOverhead(opts, server), await resumeVsParse(opts, server), ...(await forkFigures(opts, server))];
  } finally {
    await server.stop();
  }
}
