import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeHarness } from '../../support/harness';
import { ofType, subagentWorld, waitFor } from './helpers';

// Forks reuse the prompt cache (README): the fork's first request starts with the exact bytes
// of its source's requests — model, tools, system prompt and the inherited messages. These
// specs compare the raw bodies the model server received, byte for byte.

const LONG_A = `first answer ${'the parser recovers at statement boundaries '.repeat(40)}`;
const fork = (prompt: string) => ({ name: 'subagent_fork', arguments: { prompt } });

/** The length of the common prefix of two strings. */
function common(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

describe('subagent: fork request bytes — the head and the inherited messages are the source’s bytes', () => {
  const w = subagentWorld({}, { gates: false, perTest: true });

  it('a continuable child that forks itself: by design the fork has no `report` (one-shot), the one difference in its head', async () => {
    await w.setup();
    w.script.on('c', { text: LONG_A }, { toolCalls: [fork('[[cf]] side task')] }, { text: 'c done' });
    w.script.on('cf', { text: 'fork answer' });
    const { childId } = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] first task' });
    await waitFor(() => ofType(w.t.h.resident(childId)?.session.events ?? [], 'turn/end').length >= 1, 'c first turn');
    await w.t.h.subagents.followup(null, childId, '[[c]] now fork');
    await w.t.h.settle();
    const parent = w.server.requests[w.script.indexes('c').at(-1)!];
    const forked = w.server.requests[w.script.indexes('cf')[0]];
    // Decision 0006 (amended, session 49): the head differs by the continuable child's own `report` tool, and only by it.
    const names = (b: typeof parent.body) => ((b.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
    assert.deepEqual(
      names(forked.body),
      names(parent.body).filter((n) => n !== 'report'),
    );
    const withoutReport = JSON.stringify({
      ...parent.body,
      tools: (parent.body.tools as { function: { name: string } }[]).filter((t) => t.function.name !== 'report'),
    });
    const shared = common(withoutReport, JSON.stringify(forked.body));
    const inherited = withoutReport.indexOf(JSON.stringify(LONG_A)) + JSON.stringify(LONG_A).length;
    assert.ok(shared >= inherited, `the rest of the head and the inherited messages are the child's: shared ${shared} of ${inherited}`);
  });

  it('a fork after a cold resume (a new harness on the same store) starts with the bytes the parent sent before the restart', async () => {
    await w.setup();
    // Arguments with spaces as the model wrote them, combining marks and an astral character in the text.
    const args = '{ "path" : "." ,  "x":1.50 }';
    w.script.on('root', { toolCalls: [{ id: 'call 1', name: 'list_files', arguments: args }] }, { text: `${LONG_A} cafe\u0301 \u{1F600}` });
    await w.root.accept('[[root]] first question');
    await w.root.idle();
    const before = w.script
      .indexes('root')
      .map((i) => w.server.requests[i].raw)
      .at(-1)!;
    const rootId = w.root.id;
    const { storeDir, workspace } = w.t;
    await w.t.h.close();
    const again = await makeHarness(w.server, { storeDir, workspace: [workspace], releaseDelayMs: 5 });
    try {
      const root = await again.h.openSession(rootId);
      w.script.on('root', { toolCalls: [fork('[[rf]] side task')] }, { text: 'root done' });
      w.script.on('rf', { text: 'fork answer' });
      await root.accept('[[root]] now fork');
      await again.h.settle();
      const [fRaw] = w.script.indexes('rf').map((i) => w.server.requests[i].raw);
      const inherited = before.lastIndexOf(']'); // everything but the closing bracket of the messages and the tail
      const shared = common(before, fRaw);
      const cut = before.lastIndexOf('},{'); // the last message sent before the restart starts after it
      assert.ok(
        shared > cut,
        `shared ${shared} of the ${inherited} bytes sent before the restart; first difference: …${fRaw.slice(Math.max(0, shared - 80), shared + 80)}…`,
      );
      assert.ok(fRaw.includes(JSON.stringify(args)), 'the arguments are sent as the model wrote them');
    } finally {
      await again.cleanup();
    }
  });

  it('the user forks a subagent made from an agent file: the fork keeps its role, tools and model, so its head is the child’s', async () => {
    await w.setup();
    const p = path.join(w.t.workspace, '.arbor/agents/reviewer.md');
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, '---\nname: reviewer\ndescription: Reviews a diff for bugs.\ntools: Read, Grep\nmodel: other-model\n---\nYou review code.\n');
    w.script.on('c', { text: LONG_A });
    w.script.on('uf', { text: 'user fork answer' });
    const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[c]] review', agent: 'reviewer' });
    await run.result;
    const childId = run.id;
    await run.dispose();
    const [cRaw] = w.script.indexes('c').map((i) => w.server.requests[i].raw);
    const events = await w.t.h.store.readEvents(childId);
    const end = ofType(events, 'turn/end')[0].seq;
    const f = await w.t.h.forkSession(childId, end);
    await f.accept('[[uf]] go on');
    await w.t.h.settle();
    const [fRaw] = w.script.indexes('uf').map((i) => w.server.requests[i].raw);
    const shared = common(cRaw, fRaw);
    const inherited = cRaw.lastIndexOf(']');
    assert.ok(
      shared >= inherited,
      `shared ${shared} of ${inherited}; first difference: child …${cRaw.slice(Math.max(0, shared - 60), shared + 80)}… fork …${fRaw.slice(Math.max(0, shared - 60), shared + 80)}…`,
    );
  });

  it('a fork made in the turn after its parent compacted starts from the same compacted surface: no second summary, the parent’s bytes', async () => {
    await w.setup({ compaction: { thresholdTokens: 200, keepTurns: 1 } });
    w.script.on('root', { text: LONG_A }, { text: 'second answer' }, { toolCalls: [fork('[[cf2]] side task')] }, { text: 'root done' });
    w.script.on('cf2', { text: 'fork answer' });
    await w.root.accept('[[root]] first question');
    await w.root.idle();
    await w.root.accept('[[root]] second question');
    await w.root.idle();
    const summariesBefore = w.script.bodies('compaction').length;
    // The second turn's request reached the threshold: the parent compacts before its third turn, which forks.
    await w.root.accept('[[root]] third question, fork now');
    await w.t.h.settle();
    assert.equal(w.script.bodies('compaction').length, summariesBefore + 1, 'one summary: the parent’s; the fork made none of its own');
    const rRaw = w.script
      .indexes('root')
      .map((i) => w.server.requests[i].raw)
      .at(-2)!; // the request that asked for the fork
    const [fRaw] = w.script.indexes('cf2').map((i) => w.server.requests[i].raw);
    const shared = common(rRaw, fRaw);
    const third = rRaw.indexOf(JSON.stringify('[[root]] third question, fork now'));
    assert.ok(
      shared >= third - 1,
      `shared ${shared}; the parent's surface before its third question ends at ${third}; first difference: parent …${rRaw.slice(Math.max(0, shared - 60), shared + 80)}… fork …${fRaw.slice(Math.max(0, shared - 60), shared + 80)}…`,
    );
  });

  it('a conversation started with an agent file forks itself: the fork keeps the role, so its head is the conversation’s', async () => {
    await w.setup();
    const p = path.join(w.t.workspace, '.arbor/agents/reviewer.md');
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, '---\nname: reviewer\ndescription: Reviews a diff for bugs.\ntools: Read, Grep, subagent_fork\n---\nYou review code, REVIEWER-ROLE.\n');
    const root = await w.t.h.createSession({ agent: 'reviewer' });
    w.script.on('ra', { text: LONG_A }, { toolCalls: [fork('[[raf]] side task')] }, { text: 'ra done' });
    w.script.on('raf', { text: 'fork answer' });
    await root.accept('[[ra]] first');
    await root.idle();
    await root.accept('[[ra]] now fork');
    await w.t.h.settle();
    assert.equal(w.script.indexes('raf').length, 1, JSON.stringify(root.session.events.filter((e) => e.type === 'tool/result')));
    const rRaw = w.server.requests[w.script.indexes('ra').at(-2)!].raw;
    const fRaw = w.server.requests[w.script.indexes('raf')[0]].raw;
    assert.ok(rRaw.includes('REVIEWER-ROLE'));
    const shared = common(rRaw, fRaw);
    const inherited = fRaw.indexOf(JSON.stringify(LONG_A)) + JSON.stringify(LONG_A).length;
    assert.ok(
      shared >= inherited,
      `shared ${shared} of ${inherited}; first difference: parent …${rRaw.slice(Math.max(0, shared - 60), shared + 80)}… fork …${fRaw.slice(Math.max(0, shared - 60), shared + 80)}…`,
    );
  });

  it('a subagent made from an agent file forks itself, and that fork forks again: each keeps the role, so each head is the child’s', async () => {
    await w.setup();
    const p = path.join(w.t.workspace, '.arbor/agents/reviewer.md');
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, '---\nname: reviewer\ndescription: Reviews a diff for bugs.\ntools: Read, Grep, subagent_fork\n---\nYou review code, REVIEWER-ROLE.\n');
    w.script.on('ac', { text: LONG_A }, { toolCalls: [fork('[[acf]] side task')] }, { text: 'ac done' });
    w.script.on('acf', { toolCalls: [fork('[[acff]] deeper')] }, { text: 'acf done' });
    w.script.on('acff', { text: 'deepest answer' });
    const { childId } = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[ac]] review', agent: 'reviewer' });
    await waitFor(() => ofType(w.t.h.resident(childId)?.session.events ?? [], 'turn/end').length >= 1, 'ac first turn');
    await w.t.h.subagents.followup(null, childId, '[[ac]] now fork');
    await w.t.h.settle();
    const system = (tag: string) => String(w.script.bodies(tag)[0].messages[0].content);
    const tools = (tag: string) => JSON.stringify(w.script.bodies(tag)[0].tools);
    assert.ok(system('ac').includes('REVIEWER-ROLE'));
    assert.equal(system('acf'), system('ac'), 'the fork has the child’s system prompt');
    assert.equal(system('acff'), system('ac'), 'the fork of the fork too');
    // The child is continuable: its `report` is the one tool its one-shot forks do not have (decision 0006, amended).
    assert.equal(tools('acff'), tools('acf'));
    // The user forks the fork: the same role, tools and model again.
    const acf = w.t.h.store.list().find((x) => x.origin === 'fork' && x.parentSession === childId)!;
    const end = ofType(await w.t.h.store.readEvents(acf.id), 'turn/end').at(-1)!.seq;
    const mine = await w.t.h.forkSession(acf.id, end);
    await mine.accept('[[uacf]] go on');
    await w.t.h.settle();
    assert.equal(system('uacf'), system('ac'));
    assert.equal(tools('uacf'), tools('acf'));
    assert.equal(w.script.bodies('uacf')[0].model, w.script.bodies('acf')[0].model);
  });
});
