import * as assert from 'node:assert/strict';
import { SessionWriter } from '../../../src/core/agent/session-writer';
import { claudeHandlers } from '../../../src/core/remote/claude';
import { codexHandlers } from '../../../src/core/remote/codex';
import { inOrder, type LineHandlers, mapLine, type StreamState } from '../../../src/core/remote/run';
import { SessionSink } from '../../../src/core/remote/sink';
import { Session } from '../../../src/core/session/session';
import { REMOTE_BOUNDS } from '../../../src/core/subagent/remote-bounds';

// A mapped line costs a promise only when it writes to the log (decision 0106): the handlers
// and the sink are synchronous otherwise, and what they write stays in the stream's order.

function turn(): { w: SessionWriter; sink: SessionSink } {
  const s = Session.create({ id: 'map-sync', createdAt: new Date().toISOString(), origin: 'user', delegationDepth: 0 });
  const w = new SessionWriter(s, null);
  w.stage({ type: 'turn/start', turnId: 't1' });
  return { w, sink: new SessionSink(w, 'p', 'model') };
}

const state = (): StreamState => ({ errors: [], proc: { pid: 4242, identity: { pgid: 4242 } } });
const line = (v: object) => JSON.stringify(v);
const isPromise = (v: unknown) => v instanceof Promise;

async function mapAll(lines: string[], h: LineHandlers, sink: SessionSink): Promise<Array<boolean>> {
  const st = state();
  const wrote: boolean[] = [];
  for (const l of lines) {
    const r = mapLine(l, h, st, sink);
    wrote.push(isPromise(r));
    if (r) await r;
  }
  return wrote;
}

describe('mapping: a promise only when a line writes, the log in stream order', () => {
  it('codex: text and reasoning are synchronous; a command started writes its call; one completed without a start writes call then result', async () => {
    const { w, sink } = turn();
    const cmd = (id: string, status: string) => ({
      id,
      type: 'command_execution',
      command: `ls ${id}`,
      aggregated_output: status === 'completed' ? 'a\n' : '',
      exit_code: status === 'completed' ? 0 : null,
      status,
    });
    const wrote = await mapAll(
      [
        line({ type: 'item.completed', item: { id: 'r1', type: 'reasoning', text: 'think' } }),
        line({ type: 'item.started', item: cmd('c1', 'in_progress') }),
        line({ type: 'item.updated', item: cmd('c1', 'in_progress') }),
        line({ type: 'item.completed', item: cmd('c1', 'completed') }),
        line({ type: 'item.completed', item: { id: 'm1', type: 'agent_message', text: 'said' } }),
        line({ type: 'item.completed', item: cmd('c2', 'completed') }),
      ],
      codexHandlers('v'),
      sink,
    );
    assert.deepEqual(wrote, [false, true, false, true, false, true]);
    const kinds = w.session.events
      .slice(1)
      .map((e) =>
        e.type === 'tool/result' ? `result ${e.callId}` : e.type === 'assistant/message' ? `message ${e.toolCalls?.map((c) => c.id).join()}` : e.type,
      );
    assert.deepEqual(kinds, ['message c1', 'result c1', 'message c2', 'result c2']);
    const second = w.session.events[3];
    assert.equal(second.type === 'assistant/message' && second.text, 'said');
    const last = w.session.events[4];
    assert.equal(last.type === 'tool/result' && last.content, 'a\n(exit code 0)');
  });

  it('the sink: a call past the turn bound and a result for an unknown call return a settled promise, write nothing and are counted', async () => {
    const { w, sink } = turn();
    for (let i = 0; i < REMOTE_BOUNDS.toolCalls; i++) await sink.toolCall(`c${i}`, 'shell', {});
    const n = w.session.length;
    const call = sink.toolCall('over', 'shell', {});
    const result = sink.toolResult('over', 'out', false);
    assert.ok(isPromise(call) && isPromise(result));
    assert.equal(await call, undefined);
    assert.equal(await result, undefined);
    assert.equal(w.session.length, n);
    assert.equal(sink.skippedCounts['result-for-unknown-call'], 1);
  });

  it('the sink: a refused event is a rejected promise, never a synchronous throw', async () => {
    const { w, sink } = turn();
    await sink.toolCall('c1', 'shell', {});
    w.stage({ type: 'turn/end', turnId: 't1', stopReason: 'interrupted' }); // no open turn now: the result is refused
    let p: Promise<void> | undefined;
    assert.doesNotThrow(() => {
      p = sink.toolResult('c1', 'late', false);
    });
    await assert.rejects(p as Promise<void>, /needs an open turn/);
  });

  it('claude: a streamed delta is synchronous; a message writes its call after the text before it, the text after it goes to the next message', async () => {
    const { w, sink } = turn();
    const wrote = await mapAll(
      [
        line({ type: 'stream_event', event: { type: 'content_block_delta', delta: { type: 'text_delta', text: 'be' } }, parent_tool_use_id: null }),
        line({
          type: 'assistant',
          message: {
            content: [
              { type: 'text', text: 'before' },
              { type: 'tool_use', id: 'u1', name: 'Bash', input: { command: 'ls' } },
              { type: 'text', text: 'after' },
            ],
          },
          parent_tool_use_id: null,
        }),
        line({ type: 'assistant', message: { content: [{ type: 'text', text: 'only text' }] }, parent_tool_use_id: null }),
        line({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 'u1', content: 'files', is_error: false }] }, parent_tool_use_id: null }),
        line({ type: 'user', message: { content: [{ type: 'text', text: 'no result here' }] }, parent_tool_use_id: null }),
      ],
      claudeHandlers('v'),
      sink,
    );
    assert.deepEqual(wrote, [false, true, false, true, false]);
    await sink.finish();
    const events = w.session.events.slice(1);
    assert.deepEqual(
      events.map((e) => e.type),
      ['assistant/message', 'tool/result', 'assistant/message'],
    );
    const [call, result, rest] = events;
    assert.ok(call.type === 'assistant/message' && call.text === 'before' && call.toolCalls?.[0].id === 'u1');
    assert.ok(result.type === 'tool/result' && result.content === 'files');
    assert.ok(rest.type === 'assistant/message' && rest.text === 'after\n\nonly text');
  });

  it('inOrder: steps run in order, the ones after a promise wait for it; no promise when no step returned one', async () => {
    const seen: string[] = [];
    assert.equal(
      inOrder(['a', 'b'], (b) => void seen.push(String(b))),
      undefined,
    );
    assert.equal(
      inOrder('not a list', () => assert.fail('no steps')),
      undefined,
    );
    const p = inOrder(['c', 'slow', 'd'], (b) => {
      seen.push(`start ${b}`);
      if (b === 'slow') return new Promise<void>((r) => setTimeout(() => (seen.push('slow done'), r()), 5));
    });
    assert.ok(isPromise(p));
    assert.deepEqual(seen, ['a', 'b', 'start c', 'start slow']);
    await p;
    assert.deepEqual(seen, ['a', 'b', 'start c', 'start slow', 'slow done', 'start d']);
  });
});
