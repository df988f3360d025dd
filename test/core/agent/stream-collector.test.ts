import assert from 'node:assert/strict';
import { collect, nestingDepth } from '../../../src/core/agent/stream-collector';
import type { ModelStreamEvent } from '../../../src/core/model/types';

async function* events(...evs: ModelStreamEvent[]): AsyncIterable<ModelStreamEvent> {
  yield* evs;
}

describe('agent: stream collector', () => {
  it('takes a tool name repeated in every chunk once, and joins a name sent in pieces', async () => {
    const out = await collect(
      events(
        { type: 'tool-call', index: 0, id: 'a', name: 'read_file', argumentsDelta: '{"path":' },
        { type: 'tool-call', index: 0, name: 'read_file', argumentsDelta: '"x"}' },
        { type: 'tool-call', index: 1, id: 'b', name: 'list_', argumentsDelta: '' },
        { type: 'tool-call', index: 1, name: 'files', argumentsDelta: '{}' },
        { type: 'done', finishReason: 'tool_calls' },
      ),
    );
    assert.equal(out.error, undefined);
    assert.deepEqual(out.toolCalls, [
      { id: 'a', name: 'read_file', arguments: '{"path":"x"}' },
      { id: 'b', name: 'list_files', arguments: '{}' },
    ]);
  });

  it('a stream that just stops (no done, no error) is cut', async () => {
    const out = await collect(events({ type: 'text', delta: 'half' }));
    assert.equal(out.text, 'half');
    assert.equal(out.error?.code, 'cut');
  });

  it('measures nesting outside strings only', () => {
    assert.equal(nestingDepth('{"a":"[[[{{{\\"[[["}'), 1);
    assert.equal(nestingDepth('{"a":[[{"b":[]}]]}'), 5);
    assert.equal(nestingDepth('"just a string"'), 0);
  });
});
