import assert from 'node:assert/strict';
import { capFieldFor } from '../../../src/core/model/cap-field';
import { buildRequest, withCap } from '../../../src/core/model/request';

// Decision 0043: which field carries a request's completion cap. OpenAI's reasoning models
// refuse `max_tokens` and want `max_completion_tokens`; every other chat-completions endpoint
// takes `max_tokens`. The setting overrides the name rule either way.

describe('model: the completion cap field', () => {
  it('names OpenAI reasoning families (o1, o3, o4, gpt-5, with a routing prefix or a suffix) max_completion_tokens; others max_tokens', () => {
    const table: [string, string][] = [
      ['o1', 'max_completion_tokens'],
      ['o1-preview', 'max_completion_tokens'],
      ['o3-mini', 'max_completion_tokens'],
      ['O4-MINI', 'max_completion_tokens'],
      ['gpt-5', 'max_completion_tokens'],
      ['gpt-5-mini-2025-08-07', 'max_completion_tokens'],
      ['gpt-5.1', 'max_completion_tokens'],
      ['openai/o3', 'max_completion_tokens'],
      ['deepseek-chat', 'max_tokens'],
      ['deepseek-reasoner', 'max_tokens'],
      ['gpt-4o', 'max_tokens'],
      ['gpt-4.1-mini', 'max_tokens'],
      ['o10-custom', 'max_tokens'],
      ['llama3.1:8b', 'max_tokens'],
      ['qwen/o3ish', 'max_tokens'],
    ];
    for (const [model, field] of table) assert.equal(capFieldFor(model), field, model);
  });

  it('the setting overrides the name rule', () => {
    assert.equal(capFieldFor('o3-mini', 'max_tokens'), 'max_tokens');
    assert.equal(capFieldFor('my-local-reasoner', 'max_completion_tokens'), 'max_completion_tokens');
    assert.equal(capFieldFor('gpt-5', 'auto'), 'max_completion_tokens');
  });

  it('the cap goes after the conversation, so a cap that changes per step leaves the prefix and its hash as they were', () => {
    const base = {
      model: 'o3-mini',
      system: 'sys',
      tools: [],
      messages: [{ role: 'user' as const, content: 'hi', source: { kind: 'user' as const }, seq: 0 }],
    };
    const a = buildRequest({ ...base, maxTokens: 4096 }, true);
    const b = buildRequest({ ...base, maxTokens: 300 }, true);
    const none = buildRequest(base, true);
    assert.deepEqual(Object.keys(JSON.parse(a.text)), ['model', 'messages', 'max_completion_tokens', 'stream', 'stream_options']);
    assert.equal(a.prefixHash, b.prefixHash);
    assert.equal(a.prefixHash, none.prefixHash);
    assert.equal(a.bytes, Buffer.byteLength(a.text));
    assert.equal(a.bytes - none.bytes, Buffer.byteLength(',"max_completion_tokens":4096'));
  });

  it('withCap gives the same body, bytes and hashes as building the capped request afresh', () => {
    const base = {
      system: 'sys',
      tools: [{ name: 'b', description: 'B', parameters: { type: 'object' as const } }],
      messages: [{ role: 'user' as const, content: 'hi', source: { kind: 'user' as const }, seq: 0 }],
    };
    for (const model of ['deepseek-chat', 'gpt-5'])
      for (const [from, to] of [
        [undefined, 4096],
        [32_000, 700],
        [700, undefined],
      ] as const) {
        const fresh = buildRequest({ ...base, model, maxTokens: to }, true);
        const moved = withCap(buildRequest({ ...base, model, maxTokens: from }, true), model, to);
        assert.equal(moved.text, fresh.text, `${model} ${from}→${to}`);
        assert.equal(moved.bytes, fresh.bytes);
        assert.equal(moved.prefixHash, fresh.prefixHash);
        assert.equal(moved.headHash, fresh.headHash);
      }
  });
});
