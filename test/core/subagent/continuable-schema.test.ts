import assert from 'node:assert/strict';
import { subagentWorld } from './helpers';

// A continuable child has no caller waiting for a structured result: a schema is refused up
// front with an error that says what to do, never "Result recorded" for a value that goes nowhere.
describe('subagent: outputSchema with a continuable child is refused up front', () => {
  const w = subagentWorld({}, { gates: false });

  it('through the runtime: BAD_OUTPUT_SCHEMA and no child is created', async () => {
    await assert.rejects(
      w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: 'x', outputSchema: { type: 'object', properties: { a: { type: 'string' } } } }),
      (err: Error & { code?: string }) => err.code === 'BAD_OUTPUT_SCHEMA' && /only for one-shot children/.test(err.message),
    );
    assert.equal(w.t.h.store.children(w.root.id).length, 0);
  });

  it('through the subagent tool: the model gets the error as the tool result and can correct itself', async () => {
    const schema = { type: 'object', properties: { verdict: { type: 'string' } }, required: ['verdict'] };
    let seen = '';
    w.script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] judge', mode: 'continuable', outputSchema: schema } }] }, (body) => {
      seen = String(body.messages.at(-1)?.content ?? '');
      return { text: 'understood' };
    });
    await w.root.accept('[[root]] delegate');
    await w.t.h.settle();
    assert.equal(w.t.h.store.children(w.root.id).length, 0);
    assert.match(seen, /BAD_OUTPUT_SCHEMA/, 'the model saw the code');
    const result = w.root.session.events.find((e) => e.type === 'tool/result' && e.name === 'subagent');
    assert.ok(result && result.type === 'tool/result' && result.isError, 'the tool result is an error');
    assert.match(result.type === 'tool/result' ? result.content : '', /mode 'wait'/);
  });
});
