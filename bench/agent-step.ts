// agent.step.scale (issue 25.7): what one step of a turn does before its request goes out — the
// session's surface (Session.surfaceNow) and the request described through the real client
// (serialized, measured, hashed: the request/header's facts; the text it sends) — at 10k events of
// history ÷ at 100. The head (the harness's real tool schemas and system prompt, captured from a
// real turn) is the same for both; each step adds what a tool step adds (an assistant message with
// a call, its result). Blocks of steps alternate between the two sessions, so both see the same
// load. A context line gives the same 10k step built from scratch (no lineage), as it was before.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Harness } from '../src/core/harness';
import { OpenAICompatibleClient } from '../src/core/model/openai-client';
import type { ModelRequest } from '../src/core/model/types';
import { Session } from '../src/core/session/session';
import { ModelServer } from '../test/support/model-server';
import { type BenchOptions, type Figure, type FigureSpec, fmt, median, now, tempDir } from './support';
import { TimedClient } from './timed-client';

export const STEP_SCALE: FigureSpec = { id: 'agent.step.scale', op: '<=', target: 1.2 };

const AT = '2026-01-01T00:00:00.000Z';

/** A session of about `events` events: whole turns of a question, a tool step and an answer. */
function history(events: number): Session {
  const s = Session.create({ id: `bench-${events}`, createdAt: AT, origin: 'user' });
  for (let t = 0; s.length + 6 <= events; t++) {
    s.append({ type: 'turn/start', turnId: `t${t}` });
    s.append({ type: 'user/message', text: `Question ${t}: ${'what does this part do? '.repeat(6)}`, source: { kind: 'user' } });
    s.append({ type: 'assistant/message', text: '', model: 'bench', toolCalls: [{ id: `c${t}`, name: 'read_file', arguments: `{"path":"src/part${t}.ts"}` }] });
    s.append({ type: 'tool/result', callId: `c${t}`, name: 'read_file', content: `export const part${t} = 1;\n`.repeat(12), isError: false });
    s.append({ type: 'assistant/message', text: `Part ${t} ${'exports one constant and nothing else. '.repeat(4)}`, model: 'bench' });
    s.append({ type: 'turn/end', turnId: `t${t}`, stopReason: 'completed' });
  }
  s.append({ type: 'turn/start', turnId: 'open' });
  s.append({ type: 'user/message', text: 'One more step, please.', source: { kind: 'user' } });
  return s;
}

/** The head a real turn sends (tool schemas, system prompt): captured from one real request. */
async function realHead(opts: BenchOptions): Promise<Pick<ModelRequest, 'model' | 'system' | 'tools'>> {
  const server = await ModelServer.start();
  const dir = tempDir('arbor-bench-step-');
  fs.mkdirSync(path.join(dir, 'ws'));
  const client = new TimedClient(new OpenAICompatibleClient({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 }));
  const h = await Harness.open({
    storeDir: path.join(dir, 'store'),
    workspace: [path.join(dir, 'ws')],
    model: { client, name: 'bench' },
    sandbox: 'workspace-write',
    approval: 'never',
  });
  try {
    server.setFallback(() => ({ text: 'done' }));
    const s = await h.createSession();
    await s.accept('hello');
    await s.idle();
    const req = client.lastRequest;
    if (!req) throw new Error('the turn sent no request');
    opts.note(`step: head of ${req.tools.length} tools and a ${req.system.length}-character system prompt, from a real turn`);
    return { model: req.model, system: req.system, tools: req.tools };
  } finally {
    await h.close();
    await server.stop();
  }
}

export async function stepScale(opts: BenchOptions): Promise<Figure> {
  const head = await realHead(opts);
  const client = new OpenAICompatibleClient({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'k' }); // describe() never connects
  let small = history(100);
  const large = history(10_000);
  let n = 0;
  /** One step: what the step added, then the request built as the turn builds it. */
  const step = (s: Session, lineage: boolean): number => {
    n++;
    s.append({ type: 'assistant/message', text: '', model: 'bench', toolCalls: [{ id: `s${n}`, name: 'read_file', arguments: `{"path":"f${n}.ts"}` }] });
    s.append({ type: 'tool/result', callId: `s${n}`, name: 'read_file', content: `line ${n}\n`.repeat(20), isError: false });
    const t = now();
    const surface = s.surfaceNow();
    client.describe({ ...head, messages: surface.messages, ...(lineage ? { lineage: surface.lineage } : {}) });
    return now() - t;
  };
  for (let i = 0; i < 20; i++) step(small, true), step(large, true); // warm-up (the first build of each is whole)
  const blocks = opts.quick ? 10 : 30;
  const per = 20;
  const smallMs: number[] = [];
  const largeMs: number[] = [];
  let smallAt = 0;
  for (let b = 0; b < blocks; b++) {
    // A fresh 100-event history per block (each step adds two events), its first build untimed.
    small = history(100);
    step(small, true);
    smallAt = small.length;
    const first = b % 2 === 0 ? small : large;
    const second = first === small ? large : small;
    for (const s of [first, second]) for (let i = 0; i < per; i++) (s === small ? smallMs : largeMs).push(step(s, true));
  }
  const scratch: number[] = [];
  for (let i = 0; i < (opts.quick ? 5 : 15); i++) scratch.push(step(large, false));
  const ratio = median(largeMs) / median(smallMs);
  opts.note(
    `step: request built at ${large.length} events ${fmt(median(largeMs) * 1000)} µs, at ${smallAt}–${small.length} events ${fmt(median(smallMs) * 1000)} µs ` +
      `(medians of ${largeMs.length} steps each, in alternating blocks); the same ${large.length}-event step built from scratch ${fmt(median(scratch))} ms`,
  );
  return { ...STEP_SCALE, value: ratio };
}
