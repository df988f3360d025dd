import assert from 'node:assert/strict';
import { DescribedBodies } from '../../../src/core/model/described';
import { OpenAICompatibleClient } from '../../../src/core/model/openai-client';
import { buildRequest } from '../../../src/core/model/request';
import type { ModelRequest, ModelStreamEvent, ToolSpec } from '../../../src/core/model/types';
import { ModelServer } from '../../support/model-server';
import { ev, sessionWith } from '../session/fixtures';

// Decision 0069: the client keeps the bodies describe() built in one cache with one rule (keyed
// by the conversation a request carries; a request streams the body built for it; a cap-only
// change moves the tail). Whatever the order of describes and streams, what is sent is the body
// a build from scratch gives, and its bytes are the ones describe() reported.

const TOOLS: ToolSpec[] = [{ name: 'read_file', description: 'Read', parameters: { type: 'object', properties: { path: { type: 'string' } } } }];

function step(turns: number): ModelRequest {
  const s = sessionWith([]);
  for (let t = 0; t < turns; t++) s.append(ev.turnStart(`t${t}`)), s.append(ev.user(`q${t} ✓`)), s.append(ev.assistant(`a${t}`)), s.append(ev.turnEnd(`t${t}`));
  const { messages, lineage } = s.surfaceNow();
  return { model: 'deepseek-chat', system: 'sys', tools: TOOLS, messages, lineage };
}

const fresh = (req: ModelRequest) => buildRequest({ ...req, lineage: undefined }, true).text;

describe('model: the described bodies (one cache, one rule)', () => {
  it('a request streams the body described for it, once; a second take builds it again, equal', () => {
    const cache = new DescribedBodies();
    const req = step(3);
    const described = cache.describe(req, 'auto');
    assert.equal(cache.take(req, 'auto'), described, 'the very body describe() built');
    const again = cache.take(req, 'auto');
    assert.notEqual(again, described, 'taken: the entry is gone');
    assert.equal(again.text, described.text);
  });

  it('the same request with only another cap moves the tail: equal to a build from scratch, and that is what streams', () => {
    const cache = new DescribedBodies();
    const asked = step(4);
    const first = cache.describe({ ...asked, maxTokens: 4096 }, 'auto');
    const capped = { ...asked, maxTokens: 300 };
    const moved = cache.describe(capped, 'auto');
    assert.equal(moved.text, fresh(capped));
    assert.equal(moved.bytes, Buffer.byteLength(fresh(capped)));
    assert.equal(moved.prefixHash, first.prefixHash, 'the conversation before the cap is unchanged');
    assert.equal(cache.take(capped, 'auto'), moved);
  });

  it('an earlier request of the same conversation still streams its own body after a capped one was described', () => {
    const cache = new DescribedBodies();
    const asked = step(2);
    cache.describe(asked, 'auto');
    const capped = { ...asked, maxTokens: 10 };
    cache.describe(capped, 'auto');
    assert.equal(cache.take(asked, 'auto').text, fresh(asked), 'not the capped body');
    assert.equal(cache.take(capped, 'auto').text, fresh(capped));
  });

  it("a session's live surface, extended since the last describe, is built again, never the older body", () => {
    // surfaceNow hands out the fold's own array; the next step pushes onto it (one array, longer).
    const s = sessionWith([ev.turnStart('t'), ev.user('one'), ev.assistant('two'), ev.turnEnd('t')]);
    const cache = new DescribedBodies();
    const ask = (): ModelRequest => {
      const { messages, lineage } = s.surfaceNow();
      return { model: 'deepseek-chat', system: 'sys', tools: TOOLS, messages, lineage, maxTokens: 100 };
    };
    const first = ask();
    const before = cache.describe(first, 'auto');
    s.append(ev.turnStart('u'));
    s.append(ev.user('three'));
    const second = ask();
    assert.equal(second.messages, first.messages, 'the same live array, grown');
    const after = cache.describe(second, 'auto');
    assert.equal(after.text, fresh(second), 'the grown conversation, not the first body');
    assert.notEqual(after.text, before.text);
    assert.match(after.text, /three/);
    assert.equal(cache.take(second, 'auto'), after);
  });

  it('a body described before the surface grew streams as described (what was measured and budgeted goes)', () => {
    const s = sessionWith([ev.turnStart('t'), ev.user('one'), ev.assistant('two'), ev.turnEnd('t')]);
    const cache = new DescribedBodies();
    const { messages, lineage } = s.surfaceNow();
    const req: ModelRequest = { model: 'deepseek-chat', system: 'sys', tools: TOOLS, messages, lineage };
    const described = cache.describe(req, 'auto');
    s.append(ev.turnStart('u'));
    s.append(ev.user('later'));
    s.surfaceNow(); // the fold pushes onto the array the request holds
    const sent = cache.take(req, 'auto');
    assert.equal(sent, described);
    assert.doesNotMatch(sent.text, /later/);
  });

  it('conversations described side by side (a fan-out on one client) keep their own bodies', () => {
    const cache = new DescribedBodies();
    const reqs = [1, 2, 3, 4, 5].map(step);
    const built = reqs.map((r) => cache.describe(r, 'auto'));
    for (let i = reqs.length - 1; i >= 0; i--) {
      assert.equal(cache.take(reqs[i], 'auto'), built[i], `child ${i} sends what it described`);
      assert.equal(built[i].text, fresh(reqs[i]));
    }
  });

  it('another model, system prompt or tool set with the same conversation is built afresh', () => {
    const cache = new DescribedBodies();
    const req = step(2);
    cache.describe(req, 'auto');
    for (const other of [
      { ...req, model: 'other' },
      { ...req, system: 'another prompt' },
      { ...req, tools: [] },
    ]) {
      const b = cache.describe(other, 'auto');
      assert.equal(b.text, fresh(other));
      assert.equal(cache.take(other, 'auto'), b);
    }
  });

  describe('through the client, on the wire', () => {
    let server: ModelServer;
    before(async () => {
      server = await ModelServer.start();
    });
    after(() => server.stop());

    async function drain(it: AsyncIterable<ModelStreamEvent>): Promise<void> {
      for await (const _ of it);
    }

    it('sends the bytes describe() reported, with the cap a budget granted, interleaved with other conversations', async () => {
      const client = new OpenAICompatibleClient({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 });
      const a = step(3);
      const b = step(6);
      const aInfo = client.describe(a);
      const aCapped = { ...a, maxTokens: 123 };
      const aCappedInfo = client.describe(aCapped);
      const bInfo = client.describe(b);
      server.enqueue({ text: 'one' }, { text: 'two' });
      await drain(client.stream(b));
      await drain(client.stream(aCapped));
      assert.equal(server.requests[0].raw, fresh(b));
      assert.equal(Buffer.byteLength(server.requests[0].raw), bInfo.bytes);
      assert.equal(server.requests[1].raw, fresh(aCapped));
      assert.equal(Buffer.byteLength(server.requests[1].raw), aCappedInfo.bytes);
      assert.notEqual(aInfo.bytes, aCappedInfo.bytes, 'the cap is in the body');
    });
  });
});
