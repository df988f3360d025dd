// Best of N through `harness.bestOf` (decision 0061), with real git: N forks of a conversation
// at one message, each in its own worktree and with its own model (both reach the scripted
// server), the group surviving a reopen of the store, choose applying one while the others stay
// untouched until discarded, and a second apply of the same file meeting a conflict.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeHarness } from '../../support/harness';
import type { ChatBody } from '../../support/model-server';
import { ofType } from '../subagent/helpers';
import { gitIn, placeOf, read, worktreeWorld } from '../worktree/fixture';

/** Each model writes `a.txt` its own way, then answers; the conversation's own model only answers. */
function byModel(body: ChatBody) {
  const last = body.messages[body.messages.length - 1];
  const who = body.model;
  if (who === 'test-model') return { text: 'the first answer' };
  if (last.role === 'tool') return { text: `done by ${who}` };
  return { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: `${who}\n` } }] };
}

describe('Best of N: try several ways from a message, compare, apply one', () => {
  const w = worktreeWorld();

  async function firstMessage(): Promise<number> {
    w.server.setFallback((body) => byModel(body));
    await w.root.accept('rewrite a.txt', { kind: 'user' });
    await w.t.h.settle();
    const msg = ofType(w.root.session.events, 'user/message')[0];
    return msg.seq;
  }

  it('forks N ways at a user message, each in its own worktree with its own model; the workspace is untouched', async () => {
    const seq = await firstMessage();
    const { group, ways } = await w.t.h.bestOf.start(w.root.session.header.id, seq, { ways: [{ model: 'model-a' }, { model: 'model-b' }] });
    await w.t.h.settle();
    assert.equal(ways.length, 2);
    const places = await Promise.all(ways.map((id) => placeOf(w, id)));
    assert.notEqual(places[0].path, places[1].path);
    for (const p of places) assert.ok(p.path.startsWith(path.join(w.ws, '.arbor', 'worktrees')), p.path);
    assert.equal(read(path.join(places[0].root, 'a.txt')), 'model-a\n');
    assert.equal(read(path.join(places[1].root, 'a.txt')), 'model-b\n');
    assert.equal(read(path.join(w.ws, 'a.txt')), 'one\ntwo\n', 'no way wrote the conversation’s checkout');
    const models = new Set(w.server.requests.map((r) => r.body.model));
    assert.ok(models.has('model-a') && models.has('model-b'), [...models].join());
    // Each way re-ran the message from just before it: its log holds that message once, as its own turn.
    for (const id of ways) {
      const s = await w.t.h.readSession(id);
      assert.deepEqual(
        ofType(s.events, 'user/message').map((m) => m.text),
        ['rewrite a.txt'],
      );
      assert.equal(s.header.seedLength ?? 0, 0, 'the first message: nothing before it to seed');
    }
    const v = await w.t.h.bestOf.view(group);
    assert.equal(v.settled, true);
    assert.deepEqual(
      v.ways.map((x) => [x.way, x.model, x.outcome, x.worktree, x.files.map((f) => [f.path, f.status, f.added, f.removed])]),
      [
        [1, 'model-a', 'done by model-a', 'open', [['a.txt', 'modified', 1, 2]]],
        [2, 'model-b', 'done by model-b', 'open', [['a.txt', 'modified', 1, 2]]],
      ],
    );
    assert.equal(v.chosen, undefined);
  });

  it('on a reply it needs a prompt; 1 or 5 ways and a subagent are refused, and nothing is made', async () => {
    await firstMessage();
    const reply = ofType(w.root.session.events, 'assistant/message')[0].seq;
    const id = w.root.session.header.id;
    await assert.rejects(w.t.h.bestOf.start(id, reply, { ways: [{}, {}] }), (e: Error & { code?: string }) => e.code === 'PROMPT_REQUIRED');
    await assert.rejects(w.t.h.bestOf.start(id, reply, { prompt: 'x', ways: [{}] }), /Try 2 to 4 ways/);
    await assert.rejects(w.t.h.bestOf.start(id, reply, { prompt: 'x', ways: [{}, {}, {}, {}, {}] }), /Try 2 to 4 ways/);
    await assert.rejects(w.t.h.bestOf.start(id, 9999, { prompt: 'x', ways: [{}, {}] }), /no message 9999/);
    const child = await w.t.h.subagents.start(w.root, 'spawn', { prompt: 'a helper', label: 'helper' });
    await child.result;
    await child.dispose();
    await assert.rejects(w.t.h.bestOf.start(child.id, 0, { prompt: 'x', ways: [{}, {}] }), /fork the subagent first/);
    assert.equal(w.t.h.bestOf.list().length, 0);
    assert.equal(fs.existsSync(path.join(w.ws, '.arbor', 'worktrees')) && fs.readdirSync(path.join(w.ws, '.arbor', 'worktrees')).length > 0, false);
    const { group, ways } = await w.t.h.bestOf.start(id, reply, { prompt: 'and now another way', ways: [{ model: 'model-a' }, { model: 'model-b' }] });
    await w.t.h.settle();
    const s = await w.t.h.readSession(ways[0]);
    assert.deepEqual(
      ofType(s.events, 'user/message').map((m) => m.text),
      ['rewrite a.txt', 'and now another way'],
      'forked after the reply’s turn, then the given prompt',
    );
    assert.equal((await w.t.h.bestOf.view(group)).prompt, 'and now another way');
  });

  it('the group survives a reopen; choose applies one, the other stays until discarded; applying it too is a conflict', async () => {
    const seq = await firstMessage();
    const { group, ways } = await w.t.h.bestOf.start(w.root.session.header.id, seq, { ways: [{ model: 'model-a' }, { model: 'model-b' }] });
    await w.t.h.settle();
    const [a, b] = ways;
    const placeB = await placeOf(w, b);
    await w.t.h.close();
    const t2 = await makeHarness(w.server, { workspace: [w.ws], storeDir: w.t.storeDir, releaseDelayMs: 5 });
    try {
      assert.deepEqual(
        t2.h.bestOf.list().map((g) => [g.group, g.seq, g.prompt, g.ways.length]),
        [[group, seq, 'rewrite a.txt', 2]],
      );
      assert.equal(t2.h.bestOf.groupOf(b), group);
      const r = await t2.h.bestOf.choose(group, a);
      assert.deepEqual(r, { applied: true, files: ['a.txt'] });
      assert.equal(read(path.join(w.ws, 'a.txt')), 'model-a\n');
      assert.equal(read(path.join(placeB.root, 'a.txt')), 'model-b\n', 'the other way is untouched');
      const v = await t2.h.bestOf.view(group);
      assert.equal(v.chosen, a);
      assert.deepEqual(
        v.ways.map((x) => x.worktree),
        ['applied', 'open'],
      );
      // The other way changed the same lines from the same base: applying it too is a conflict, and changes nothing.
      const second = await t2.h.bestOf.choose(group, b);
      assert.equal(second.applied, false);
      assert.deepEqual(!second.applied && second.conflicts.map((c) => c.path), ['a.txt']);
      assert.equal(read(path.join(w.ws, 'a.txt')), 'model-a\n');
      assert.deepEqual(await t2.h.bestOf.discardOthers(group, a), [b]);
      assert.equal(fs.existsSync(placeB.path), false);
      assert.equal(gitIn(w.ws, 'branch', '--list', placeB.branch), '');
      assert.deepEqual(
        (await t2.h.bestOf.view(group)).ways.map((x) => x.worktree),
        ['applied', 'discarded'],
      );
      await assert.rejects(t2.h.bestOf.choose(group, w.root.session.header.id), (e: Error & { code?: string }) => e.code === 'UNKNOWN_GROUP');
    } finally {
      await t2.cleanup();
    }
  });

  it('a way is confined to its worktree, also after a cold resume: its write to the workspace is refused', async () => {
    const seq = await firstMessage();
    const { ways } = await w.t.h.bestOf.start(w.root.session.header.id, seq, { ways: [{ model: 'model-a' }, { model: 'model-b' }] });
    await w.t.h.settle();
    const place = await placeOf(w, ways[0]);
    await w.t.h.close();
    const t2 = await makeHarness(w.server, { workspace: [w.ws], storeDir: w.t.storeDir, releaseDelayMs: 5 });
    try {
      w.server.setFallback((body) => {
        const last = body.messages[body.messages.length - 1];
        if (last.role === 'tool') return { text: 'tried' };
        return {
          toolCalls: [
            { name: 'write_file', arguments: { path: path.join(w.ws, 'a.txt'), content: 'ESCAPED\n' } },
            { name: 'run_command', arguments: { command: `echo ESCAPED > ${path.join(w.ws, 'b.txt')}; echo inside > more.txt` } },
          ],
        };
      });
      await t2.h.send(ways[0], 'write outside');
      await t2.h.settle();
      const res = ofType((await t2.h.readSession(ways[0])).events, 'tool/result').slice(-2);
      assert.equal(res[0].isError, true, res[0].content);
      assert.equal(read(path.join(w.ws, 'a.txt')), 'one\ntwo\n', 'the workspace file is untouched');
      assert.equal(fs.existsSync(path.join(w.ws, 'b.txt')), false, 'the command could not write the workspace');
      assert.equal(read(path.join(place.root, 'more.txt')), 'inside\n', 'the command ran in the worktree');
    } finally {
      await t2.cleanup();
    }
  });

  it('a way with an agent file runs as that agent; an unknown agent name makes nothing', async () => {
    const seq = await firstMessage();
    fs.mkdirSync(path.join(w.ws, '.arbor', 'agents'), { recursive: true });
    fs.writeFileSync(path.join(w.ws, '.arbor', 'agents', 'careful.md'), '---\nname: careful\ndescription: takes care\nmodel: model-c\n---\nYou are careful.\n');
    const id = w.root.session.header.id;
    await assert.rejects(w.t.h.bestOf.start(id, seq, { ways: [{ agent: 'nobody' }, {}] }), /No agent named "nobody"/);
    assert.equal(w.t.h.bestOf.list().length, 0);
    const { group, ways } = await w.t.h.bestOf.start(id, seq, { ways: [{ agent: 'careful' }, { model: 'model-b' }] });
    await w.t.h.settle();
    const s = await w.t.h.readSession(ways[0]);
    assert.equal(s.header.agent?.name, 'careful');
    assert.ok(w.server.requests.some((r) => r.body.model === 'model-c'));
    assert.deepEqual(
      (await w.t.h.bestOf.view(group)).ways.map((x) => [x.agent, x.model]),
      [
        ['careful', undefined],
        [undefined, 'model-b'],
      ],
    );
  });
});
