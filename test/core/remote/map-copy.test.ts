import * as assert from 'node:assert/strict';
import { SessionWriter } from '../../../src/core/agent/session-writer';
import { claudeHandlers } from '../../../src/core/remote/claude';
import { codexHandlers } from '../../../src/core/remote/codex';
import { type LineHandlers, mapLine, type StreamState } from '../../../src/core/remote/run';
import { SessionSink } from '../../../src/core/remote/sink';
import type { SessionEvent } from '../../../src/core/session/events';
import { Session } from '../../../src/core/session/session';
import { Store } from '../../../src/core/store';
import { tempDir } from '../../support/store-fixtures';

// The copy contract at the mapping boundary (decision 0065): a program's lines become events
// that the log owns. Whoever is handed an event — a writer's listener (a face), the store's
// staged listener (a view), the caller of append — may change it, down to the last nested
// array, and changes neither the log nor what the store writes.

const grep = (n: number) => Array.from({ length: n }, (_, k) => `src/a.ts:${k}: a line of output ${k}`).join('\n');

function codexLines(): string[] {
  const lines = [JSON.stringify({ type: 'thread.started', thread_id: 'th-1' }), JSON.stringify({ type: 'turn.started' })];
  for (let i = 0; i < 3; i++) {
    const item = { id: `item_${i}`, type: 'command_execution', command: `grep -n x ${i}`, aggregated_output: '', exit_code: null, status: 'in_progress' };
    lines.push(JSON.stringify({ type: 'item.completed', item: { id: `r_${i}`, type: 'reasoning', text: `thinking ${i}` } }));
    lines.push(JSON.stringify({ type: 'item.started', item }));
    lines.push(JSON.stringify({ type: 'item.completed', item: { ...item, aggregated_output: grep(i + 2), exit_code: 0, status: 'completed' } }));
    lines.push(JSON.stringify({ type: 'item.completed', item: { id: `m_${i}`, type: 'agent_message', text: `step ${i} done` } }));
  }
  lines.push(JSON.stringify({ type: 'turn.completed', usage: { input_tokens: 100, cached_input_tokens: 50, output_tokens: 9 } }));
  return lines;
}

function claudeLines(): string[] {
  const session_id = 's-1';
  const ev = (event: object) => JSON.stringify({ type: 'stream_event', event, session_id, parent_tool_use_id: null });
  const lines = [JSON.stringify({ type: 'system', subtype: 'init', session_id, model: 'claude-x', claude_code_version: '2.1.332' })];
  for (let i = 0; i < 3; i++) {
    lines.push(ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `Step ${i}: ` } }));
    lines.push(ev({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: `hmm ${i}` } }));
    const content = [
      { type: 'thinking', thinking: `hmm ${i}` },
      { type: 'text', text: `Step ${i}: looking` },
      { type: 'tool_use', id: `toolu_${i}`, name: 'Bash', input: { command: `grep ${i}`, nested: { list: [1, 2, { deep: 'x' }] } } },
    ];
    lines.push(JSON.stringify({ type: 'assistant', message: { model: 'claude-x', content }, parent_tool_use_id: null, session_id }));
    const result = { type: 'tool_result', tool_use_id: `toolu_${i}`, content: [{ type: 'text', text: grep(i + 1) }], is_error: i === 1 };
    lines.push(JSON.stringify({ type: 'user', message: { role: 'user', content: [result] }, parent_tool_use_id: null, session_id }));
  }
  lines.push(JSON.stringify({ type: 'result', subtype: 'success', stop_reason: 'end_turn', usage: { input_tokens: 5, output_tokens: 7 } }));
  return lines;
}

/** Change everything reachable in a value: strings, numbers, booleans, arrays and keys. */
function vandalize(v: unknown): void {
  if (typeof v !== 'object' || v === null) return;
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    const x = o[k];
    if (typeof x === 'object' && x !== null) vandalize(x);
    else if (typeof x === 'string') o[k] = `vandalized ${x}`;
    else if (typeof x === 'number') o[k] = x + 1000;
    else if (typeof x === 'boolean') o[k] = !x;
  }
  if (Array.isArray(v)) v.push({ added: 'by a consumer' });
  else o.addedByConsumer = true;
}

const HEADER = { createdAt: '2026-01-01T00:00:00.000Z', origin: 'user' as const, delegationDepth: 0 };

/** A running remote turn's writer: the frame a child's turn has before the program's first line. */
async function turnWriter(id: string, store: Store | null): Promise<SessionWriter> {
  const w = new SessionWriter(Session.create({ id, ...HEADER }), store, { published: false });
  w.stage({ type: 'inbox/accepted', messageId: 'm1', text: 'task', source: { kind: 'user' }, at: HEADER.createdAt });
  w.stage({ type: 'inbox/claimed', messageId: 'm1', at: HEADER.createdAt });
  w.stage({ type: 'turn/start', turnId: 't1', at: HEADER.createdAt });
  await w.publish();
  return w;
}

async function mapInto(w: SessionWriter, lines: readonly string[], handlers: LineHandlers, prefix: string): Promise<void> {
  const sink = new SessionSink(w, prefix, 'model-x');
  const st: StreamState = { errors: [], proc: { pid: 4242, identity: { pgid: 4242 } } };
  for (const l of lines) await mapLine(l, handlers, st, sink);
  await sink.finish();
  const end = await w.append({ type: 'turn/end', turnId: 't1', stopReason: st.final?.stopReason ?? 'error' });
  vandalize(end); // the caller's own copy
  await w.flush();
}

/** Events without their times (two runs map the same lines at different instants). */
const timeless = (events: readonly SessionEvent[]) => events.map(({ at: _at, ...rest }) => rest);

describe('remote mapping: what a consumer does to its event stays its own', () => {
  const formats = [
    { name: 'codex', lines: codexLines, handlers: () => codexHandlers('codex-cli 0.171.0') },
    { name: 'claude', lines: claudeLines, handlers: () => claudeHandlers('2.1.332 (Claude Code)') },
  ];
  for (const f of formats) {
    it(`${f.name}: consumers that change every event they are handed change neither the log nor the store`, async () => {
      const reference = await turnWriter('reference', null);
      await mapInto(reference, f.lines(), f.handlers(), f.name);
      const want = timeless(reference.session.events);
      assert.ok(want.length >= 10, `${want.length} events mapped`);

      const tmp = tempDir();
      try {
        let store = await Store.open(tmp.dir);
        let seen = 0;
        store.onStaged((_id, e) => {
          seen++;
          vandalize(e);
        });
        const w = await turnWriter('vandalized', store);
        w.onEvent((e) => vandalize(e));
        await mapInto(w, f.lines(), f.handlers(), f.name);
        assert.equal(seen, want.length, 'the view saw every event');
        assert.deepEqual(timeless(w.session.events), want, 'the log is what was mapped');
        await store.close();
        store = await Store.open(tmp.dir);
        assert.deepEqual(timeless(await store.readEvents('vandalized')), want, 'the store wrote what was mapped');
        await store.close();
      } finally {
        tmp.remove();
      }
    });
  }
});

describe('SessionWriter.write: a draft handed over (decision 0118)', () => {
  it('the log keeps the draft itself; listeners and the store get one copy, changing it changes neither the log nor the store', async () => {
    const tmp = tempDir();
    try {
      let store = await Store.open(tmp.dir);
      const staged: SessionEvent[] = [];
      store.onStaged((_id, e) => staged.push(e));
      const w = await turnWriter('written', store);
      const heard: SessionEvent[] = [];
      w.onEvent((e) => heard.push(e));
      const draft = { type: 'assistant/message' as const, text: 'calling', model: 'm', toolCalls: [{ id: 'c1', name: 'p:shell', arguments: '{}' }] };
      const writing = w.write(draft);
      assert.equal(w.session.events[w.session.length - 1], draft, 'no copy in');
      const last = heard[heard.length - 1];
      assert.notEqual(last, draft, 'the listener is handed a copy');
      assert.equal(staged[staged.length - 1], last, 'listeners and the store share that one copy');
      vandalize(last);
      await writing;
      const want = structuredClone(draft) as unknown as SessionEvent;
      assert.equal(draft.text, 'calling', 'the log is what was written');
      await w.append({ type: 'tool/result', callId: 'c1', name: 'p:shell', content: 'ok', isError: false });
      await w.flush();
      await store.close();
      store = await Store.open(tmp.dir);
      const stored = await store.readEvents('written');
      assert.deepEqual(stored[want.seq], want, 'the store wrote what was written');
      await store.close();
    } finally {
      tmp.remove();
    }
  });

  it('refuses what stage refuses, synchronously, and the log is as it was', async () => {
    const w = await turnWriter('refused', null);
    const n = w.session.length;
    assert.throws(() => w.write({ type: 'tool/result', callId: 'nobody', name: 'p:shell', content: '', isError: false }), { code: 'UNKNOWN_CALL' });
    assert.equal(w.session.length, n);
  });
});
