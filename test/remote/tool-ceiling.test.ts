// Attack (permissions never widen): a child limited to read_file + workflow has no delegate_codex,
// yet a workflow's agent(prompt, {provider: 'codex'}) named the remote provider directly, and the
// Codex child got every tool Codex has (shell, edits). A limited caller may start a remote child
// only through that program's own delegation tool, when it has it.
import assert from 'node:assert/strict';
import { byWire, ofType, remoteWorld } from './world';

describe('remote: a tool-limited caller cannot reach a remote program it may not delegate to', function () {
  this.timeout(120_000);
  const w = remoteWorld();

  it("a workflow agent({provider: 'codex'}) from a child without delegate_codex is refused; nothing runs", async () => {
    const script = "const r = await agent('write x.txt', { provider: 'codex' }); return r;";
    byWire(w.server, {
      chat: [{ toolCalls: [{ name: 'workflow', arguments: { script, meta: { name: 'w', description: 'w' } } }] }, { text: 'limited done' }],
      responses: [{ toolCalls: [{ name: 'exec_command', arguments: { cmd: 'echo wider > x.txt' } }] }, { text: 'wrote it' }],
    });
    const root = await w.t.h.createSession();
    const run = await w.t.h.subagents.start(root, 'spawn', { prompt: 'use a workflow', toolFilter: ['read_file', 'workflow'] });
    const r = await run.result;
    await run.dispose();
    assert.equal(r.stopReason, 'completed', r.error);
    const kids = w.t.h.store.children(run.id).map((c) => c.id);
    assert.deepEqual(kids, [], 'no codex child was made under the limited caller');
    assert.equal(w.server.requests.filter((q) => q.wire === 'responses').length, 0, 'codex never ran');
    const s = await w.t.h.store.inspect(run.id);
    const res = ofType(s.events, 'tool/result').find((x) => x.name === 'workflow');
    assert.match(res?.content ?? '', /UNSUPPORTED_CAPABILITY/);
  });
});
