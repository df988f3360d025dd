import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { buildRequest, canonical, withCap } from '../../../src/core/model/request';
import type { ModelRequest, ToolSpec } from '../../../src/core/model/types';
import type { DerivedMessage } from '../../../src/core/session/derive';
import { ev, sessionWith } from '../session/fixtures';

// Decision 0064: a step serializes only the messages its session's surface gained since the
// lineage's last request. What goes on the wire, its byte count and both hashes must be exactly
// those of a build from scratch (providers' prefix caches key on the bytes), whatever the surface
// did meanwhile: grew, was rewritten by a compaction, or came with another system prompt.

const TOOLS: ToolSpec[] = [
  { name: 'write_file', description: 'Write', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
  { name: 'read_file', description: 'Read', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
];

/** The body as the client built it before decision 0064: one object, stringified whole. */
function reference(req: ModelRequest, stream = true): { text: string; prefixHash: string; headHash: string } {
  const tools = [...req.tools]
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: canonical(t.parameters) } }));
  const system = { role: 'system', content: req.system };
  const wire = (m: DerivedMessage) =>
    m.role === 'user'
      ? { role: 'user', content: m.content }
      : m.role === 'tool'
        ? { role: 'tool', tool_call_id: m.toolCallId, content: m.content }
        : {
            role: 'assistant',
            content: m.content,
            ...(m.toolCalls?.length
              ? { tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) }
              : {}),
          };
  const body: Record<string, unknown> = { model: req.model };
  if (tools.length > 0) body.tools = tools;
  body.messages = [system, ...req.messages.map(wire)];
  if (req.maxTokens !== undefined) body.max_tokens = req.maxTokens;
  body.stream = stream;
  if (stream) body.stream_options = { include_usage: true };
  const head = JSON.stringify({ model: req.model, tools, system });
  const sha = (...parts: string[]) => {
    const h = createHash('sha256');
    for (const p of parts) h.update(p);
    return h.digest('hex').slice(0, 32);
  };
  return { text: JSON.stringify(body), headHash: sha(head), prefixHash: sha(head, '\n', JSON.stringify(body.messages)) };
}

function assertSame(req: ModelRequest, what: string): void {
  const built = buildRequest(req, true);
  const fresh = buildRequest({ ...req, lineage: undefined }, true);
  const ref = reference(req);
  assert.equal(built.text, ref.text, `${what}: the text`);
  assert.equal(built.text, fresh.text, `${what}: the text, built without a lineage`);
  assert.equal(built.bytes, Buffer.byteLength(ref.text), `${what}: the bytes`);
  assert.equal(built.prefixHash, ref.prefixHash, `${what}: the prefix hash`);
  assert.equal(built.headHash, ref.headHash, `${what}: the head hash`);
  assert.equal(built.headBytes, fresh.headBytes, `${what}: the head bytes`);
}

describe('model: request building is incremental (O(Δ) per step) and byte-identical to a build from scratch', () => {
  it('equals the whole build after every event of a long session with tool calls, a turn cut short and unicode', () => {
    const s = sessionWith([]);
    const request = (system = 'You are Arbor.'): ModelRequest => {
      const { messages, lineage } = s.surfaceNow();
      return { model: 'deepseek-chat', system, tools: TOOLS, messages, lineage, maxTokens: 4096 };
    };
    for (let t = 0; t < 40; t++) {
      s.append(ev.turnStart(`t${t}`));
      s.append(ev.user(`question ${t} — "quoted" \u2028 ✓ ${'x'.repeat(t * 7)}`));
      assertSame(request(), `turn ${t} start`);
      s.append(ev.assistant(`let me look ${t}`, [[`c${t}`, 'read_file']]));
      if (t % 5 === 4) {
        s.append(ev.turnEnd(`t${t}`, 'interrupted')); // the unanswered call gets its stand-in result
        assertSame(request(), `turn ${t} interrupted`);
        continue;
      }
      s.append(ev.result(`c${t}`, 'read_file', `contents ${t}\n\t{"json": true}`));
      assertSame(request(), `turn ${t} after the tool`);
      s.append(ev.assistant(`answer ${t}`));
      s.append(ev.turnEnd(`t${t}`));
      assertSame(request(), `turn ${t} end`);
    }
  });

  it('a committed compaction rewrites the surface: a new lineage, built whole, still equal', () => {
    const s = sessionWith([]);
    for (let t = 0; t < 6; t++) s.append(ev.turnStart(`t${t}`)), s.append(ev.user(`q${t}`)), s.append(ev.assistant(`a${t}`)), s.append(ev.turnEnd(`t${t}`));
    const before = s.surfaceNow();
    assertSame({ model: 'm', system: 'sys', tools: [], messages: before.messages, lineage: before.lineage }, 'before');
    s.append(ev.compactionStart('c1'));
    s.append(ev.replacement('c1', 0, 11));
    s.append(ev.compactionEnd('c1', 'committed'));
    const after = s.surfaceNow();
    assert.notEqual(after.lineage, before.lineage);
    assertSame({ model: 'm', system: 'sys', tools: [], messages: after.messages, lineage: after.lineage }, 'after the compaction');
    s.append(ev.compactionStart('c2'));
    s.append(ev.compactionEnd('c2', 'aborted'));
    assert.equal(s.surfaceNow().lineage, after.lineage, 'an aborted compaction changes nothing');
  });

  it('another system prompt, model or tool set (a re-read AGENTS.md, a model switch) serializes afresh, equal', () => {
    const s = sessionWith([ev.turnStart('t'), ev.user('one'), ev.assistant('two'), ev.turnEnd('t')]);
    const { messages, lineage } = s.surfaceNow();
    assertSame({ model: 'a', system: 'first', tools: TOOLS, messages, lineage }, 'first head');
    assertSame({ model: 'a', system: 'second', tools: TOOLS, messages, lineage }, 'another system prompt');
    assertSame({ model: 'b', system: 'second', tools: TOOLS, messages, lineage }, 'another model');
    assertSame({ model: 'b', system: 'second', tools: TOOLS.slice(1), messages, lineage }, 'fewer tools');
    assertSame({ model: 'b', system: 'second', tools: [], messages, lineage }, 'no tools');
  });

  it('an older (shorter) surface or messages that do not extend the lineage are built whole, not spliced', () => {
    const s = sessionWith([ev.turnStart('t'), ev.user('one'), ev.assistant('two'), ev.turnEnd('t')]);
    const early = { messages: s.deriveMessages() }; // a copy: surfaceNow's array is live and grows
    s.append(ev.turnStart('u'));
    s.append(ev.user('three'));
    const later = s.surfaceNow();
    const req = (messages: readonly DerivedMessage[]): ModelRequest => ({ model: 'm', system: 's', tools: [], messages, lineage: later.lineage });
    assertSame(req(later.messages), 'the later surface');
    assertSame(req(early.messages), 'the earlier surface again');
    const other = sessionWith([ev.turnStart('t'), ev.user('elsewhere'), ev.assistant('entirely'), ev.turnEnd('t'), ev.user('else')]).deriveMessages();
    assertSame(req(other), 'another session under this lineage');
    assertSame(req(later.messages), 'the later surface after that');
  });

  it('withCap moves only the tail: equal to building the capped request afresh', () => {
    const s = sessionWith([ev.turnStart('t'), ev.user('one'), ev.assistant('two'), ev.turnEnd('t')]);
    const { messages, lineage } = s.surfaceNow();
    const base = { model: 'deepseek-chat', system: 's', tools: TOOLS, messages, lineage };
    const moved = withCap(buildRequest({ ...base, maxTokens: 4096 }, true), 'deepseek-chat', 300);
    const fresh = buildRequest({ ...base, maxTokens: 300, lineage: undefined }, true);
    assert.equal(moved.text, fresh.text);
    assert.equal(moved.bytes, fresh.bytes);
    assert.equal(moved.prefixHash, fresh.prefixHash);
  });

  it('a step at 10k events of history serializes what it added, not the history', () => {
    const s = sessionWith([]);
    for (let i = 0; i < 2500; i++)
      s.append(ev.turnStart(`t${i}`)), s.append(ev.user(`q${i} ${'y'.repeat(400)}`)), s.append(ev.assistant(`a${i}`)), s.append(ev.turnEnd(`t${i}`));
    const req = (): ModelRequest => {
      const { messages, lineage } = s.surfaceNow();
      return { model: 'm', system: 's', tools: TOOLS, messages, lineage };
    };
    const first = buildRequest(req(), true);
    assert.ok(first.bytes > 1_000_000, `a history of ${first.bytes} bytes`);
    s.append(ev.turnStart('last'));
    s.append(ev.user('the new question'));
    // Count what JSON.stringify produces while the next step is built: the new message and the
    // head (tools, system), never the history.
    const stringify = JSON.stringify;
    let produced = 0;
    JSON.stringify = ((...args: Parameters<typeof stringify>) => {
      const out = stringify(...args);
      produced += out?.length ?? 0;
      return out;
    }) as typeof stringify;
    let step: ReturnType<typeof buildRequest>;
    try {
      step = buildRequest(req(), true);
    } finally {
      JSON.stringify = stringify;
    }
    assert.ok(produced < 5_000, `serialized ${produced} characters for one step`);
    assert.equal(step.text, reference(req()).text);
  });
});
