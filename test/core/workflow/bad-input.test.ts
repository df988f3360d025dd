import assert from 'node:assert/strict';
import type { ChatBody } from '../../support/model-server';
import { dataOf, workflowWorld } from './helpers';

describe('workflow: bad input fails with a code, before or without harm', () => {
  const x = workflowWorld();

  it('an empty script is BAD_INPUT, and nothing starts', async () => {
    for (const script of ['', '   \n ']) {
      const o = await x.run(script);
      assert.equal(o.code, 'BAD_INPUT');
      assert.match(o.error!, /empty/);
    }
    assert.equal(x.root.session.length, 0);
  });

  it('a 1 MB script is BAD_INPUT (over the script limit), and nothing starts', async () => {
    const o = await x.run(`return "${'x'.repeat(1024 * 1024)}";`);
    assert.equal(o.code, 'BAD_INPUT');
    assert.match(o.error!, /limit is 262144/);
    assert.equal(x.root.session.length, 0);
  });

  it('args that are not plain JSON are refused: a function, a Map, NaN, a cycle', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const args of [{ f: () => 1 }, new Map([[1, 2]]), { n: NaN }, cyclic]) {
      const o = await x.run('return args;', { args });
      assert.equal(o.code, 'BAD_INPUT', String(args));
    }
    const ok = await x.run('return args.files.length;', { args: { files: ['a', 'b'] } });
    assert.equal(ok.resultJson, '2');
  });

  it('unknown opts keys are the fatal BAD_AGENT_REQUEST, naming the key; no child is created', async () => {
    const o = await x.run('return await agent("task", { label: "a", timeout: 5 });');
    assert.equal(o.code, 'BAD_AGENT_REQUEST');
    assert.match(o.error!, /unknown option timeout; known: label, schema, tools, persona, provider/);
    assert.equal(x.w.t.h.store.children(x.root.id).length, 0);
  });

  it('10k log() calls keep the first 1,000 and count the rest as dropped', async () => {
    const o = await x.run('for (let i = 0; i < 10000; i++) log("line " + i + " " + "y".repeat(3000)); return "ok";');
    assert.equal(o.status, 'completed', o.error);
    const logs = x.events('workflow/log').map(dataOf);
    assert.equal(logs.length, 1000);
    assert.equal(logs[0].truncated, true, 'a message past 2 KB is cut and marked');
    assert.ok(Buffer.byteLength(String(logs[0].message)) <= 2048);
    assert.equal(dataOf(x.events('workflow/end')[0]).logsDropped, 9000);
  });

  it('process.exit() in the script does not reach a process: SCRIPT_ERROR with its line; the host lives', async () => {
    const o = await x.run('log("before");\nprocess.exit(0);\nreturn 1;');
    assert.equal(o.code, 'SCRIPT_ERROR');
    assert.equal(o.line, 2);
    assert.match(o.error!, /process is not defined/);
  });

  it('a result that is not JSON, or too large, is RESULT_NOT_JSON / RESULT_TOO_LARGE', async () => {
    assert.equal((await x.run('log("no return");')).code, 'RESULT_NOT_JSON');
    assert.equal((await x.run('return 10n;')).code, 'RESULT_NOT_JSON');
    assert.equal((await x.run('return "z".repeat(300 * 1024);')).code, 'RESULT_TOO_LARGE');
  });

  it('two workflows in one step run side by side as two runs, each with its own children', async () => {
    const isChild = (b: ChatBody) => b.messages.some((m) => String(m.content ?? '').startsWith('[Arbor runtime] You are a subagent'));
    x.replies((p, body) => {
      if (isChild(body)) return { text: `did ${p}` };
      if (body.messages[body.messages.length - 1].role === 'tool') return { text: 'both done' };
      const call = (n: string) => ({
        name: 'workflow',
        arguments: { script: `return await parallel([() => agent("${n}1"), () => agent("${n}2")]);`, meta: { name: n, description: n } },
      });
      return { toolCalls: [call('A'), call('B')] };
    });
    await x.root.accept('two at once', { kind: 'user' });
    await x.w.t.h.settle();
    const ends = x.events('workflow/end').map(dataOf);
    assert.deepEqual(
      ends.map((d) => d.status),
      ['completed', 'completed'],
    );
    const runs = new Set(x.events('workflow/start').map((e) => (e as unknown as { runId: string }).runId));
    assert.equal(runs.size, 2);
    const results = x.root.session.events.filter((e) => e.type === 'tool/result').map((e) => JSON.parse((e as { content: string }).content).result);
    assert.deepEqual(results, [
      ['did A1', 'did A2'],
      ['did B1', 'did B2'],
    ]);
    const starts = x.events('workflow/start').map(dataOf);
    assert.notEqual(starts[0].callId, starts[1].callId, 'each run records its own tool call');
  });

  it('no tool call id and no live parent: NOT_LIVE', async () => {
    const o = await x.engine.run({ script: 'return 1;', meta: { name: 'n', description: 'd' } }, { sessionId: 'nobody', signal: new AbortController().signal });
    assert.equal(o.code, 'NOT_LIVE');
  });
});

describe('workflow: depth exceeded inside a workflow', () => {
  const x = workflowWorld({ maxDepth: 0 });
  it('agent() from a parent at the deepest level is BAD_AGENT_REQUEST (DEPTH_EXCEEDED); nothing is created', async () => {
    const o = await x.run('return await parallel([() => agent("one")]);');
    assert.equal(o.code, 'BAD_AGENT_REQUEST');
    assert.match(o.error!, /DEPTH_EXCEEDED/);
    assert.equal(x.w.t.h.store.children(x.root.id).length, 0);
  });
});
