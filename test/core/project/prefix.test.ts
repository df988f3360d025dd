import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Session } from '../../../src/core/session/session';
import type { ChatBody } from '../../support/model-server';
import { ofType, subagentWorld, systemOf, toolNames } from '../subagent/helpers';

const RULES = `# House rules\n${'Run the tests before you say you are done; keep functions short. '.repeat(30)}`;
const AGENT = '---\nname: reviewer\ndescription: Reviews a diff for bugs.\ntools: Read, Grep\n---\nYou review code.\n';

/** Characters of the server's cache text covered by tools + the system prompt. */
const headChars = (body: ChatBody) => JSON.stringify(body.tools ?? []).length + JSON.stringify(body.messages.slice(0, 1)).length - 1;

describe('project instructions and the agent catalogue in the cache-stable prefix: same bytes across turns, forks and children', () => {
  const w = subagentWorld({}, { gates: false, perTest: true });
  const put = (rel: string, text: string) => {
    const p = path.join(w.t.workspace, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, text);
  };
  const heads = (evs: Parameters<typeof ofType>[0]) => ofType(evs, 'request/header').map((e) => e.headHash);

  it('every turn, a fork and a filtered child see the same instructions; the fork head equals the parent head; the cache covers it', async () => {
    await w.setup();
    put('AGENTS.md', RULES);
    put('.arbor/agents/reviewer.md', AGENT);
    w.script.on('root', { text: 'first' }, { toolCalls: [{ name: 'subagent_fork', arguments: { prompt: '[[f]] side task' } }] }, { text: 'root done' });
    w.script.on('f', { text: 'fork answer' });
    w.script.on('c', { text: 'child answer' });
    await w.root.accept('[[root]] first question');
    await w.root.idle();
    await w.root.accept('[[root]] now fork');
    await w.t.h.settle();

    const [first, second] = w.script.bodies('root');
    assert.ok(systemOf(first).includes('Run the tests before you say you are done'), 'the instructions are in the system prompt');
    assert.ok(systemOf(first).includes('- reviewer: Reviews a diff for bugs.'), 'the catalogue is in the system prompt');
    assert.equal(systemOf(second), systemOf(first));
    const rootHeads = heads(w.root.session.events);
    assert.equal(new Set(rootHeads).size, 1, 'one head for every request of the root');

    const [fork] = w.t.h.store.children(w.root.id);
    const f = Session.restore(fork, await w.t.h.store.readEvents(fork.id));
    assert.deepEqual(heads(f.events.slice(f.firstLiveSeq)), [rootHeads[0]], "the fork's head is the parent's bytes");
    const served = w.server.requests[w.script.indexes('root')[1]];
    assert.ok(served.cacheHitTokens >= Math.floor(headChars(second) / 256) * 64, `hit ${served.cacheHitTokens} for a head of ${headChars(second)} chars`);

    // A child restricted to one tool still has the instructions (prompt sections are not tools).
    const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[c]] look', toolFilter: ['read_file'] });
    await run.result;
    await run.dispose();
    const [child] = w.script.bodies('c');
    assert.deepEqual(toolNames(child), ['read_file']);
    assert.ok(systemOf(child).includes(RULES.trim().slice(0, 200)), 'children see the same instructions as their parent');
  });

  it('an edited AGENTS.md is seen by the next request (one new head), then the head holds again', async () => {
    await w.setup();
    put('AGENTS.md', 'VERSION-ONE rules');
    w.script.on('root', { text: 'a' }, { text: 'b' }, { text: 'c' });
    await w.root.accept('[[root]] one');
    await w.root.idle();
    put('AGENTS.md', 'VERSION-TWO rules, edited');
    await w.root.accept('[[root]] two');
    await w.root.idle();
    await w.root.accept('[[root]] three');
    await w.root.idle();
    const [b1, b2] = w.script.bodies('root');
    assert.match(systemOf(b1), /VERSION-ONE/);
    assert.match(systemOf(b2), /VERSION-TWO/);
    assert.ok(!systemOf(b2).includes('VERSION-ONE'));
    const [h1, h2, h3] = heads(w.root.session.events);
    assert.notEqual(h2, h1, 'the change costs one head');
    assert.equal(h3, h2, 'and then the head is stable again');
    assert.deepEqual(
      w.t.h.project.snapshot().instructions.map((i) => i.shown),
      ['AGENTS.md'],
    );
  });
});
