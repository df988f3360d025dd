import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeHarness } from '../support/harness';
import { assertValidTurn, groupAlive, harnessAndHomePerTest, ofType, programHome } from './world';

// Issue 15.4: a remote child's program makes its requests where Arbor's budget check cannot
// see them. Its subtree's budget still holds: a child that cannot fit is never started, and a
// running one is stopped (its program's group gone) when the budget above it is used up.
// Real processes through the codex driver: the script below plays `codex exec --json`, its
// behaviour picked by a marker in the task.
const FAKE = `#!/usr/bin/env node
const fs = require('fs');
const path = require('path');
const dir = process.env.FAKE_DIR;
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
if (process.argv.includes('--version')) { console.log('fake-codex 1.0'); process.exit(0); }
fs.appendFileSync(path.join(dir, 'runs.log'), 'run\\n');
const task = process.argv[process.argv.length - 1];
const start = () => out({ type: 'thread.started', thread_id: 'fake-' + process.pid });
const finish = (text, input) => {
  out({ type: 'item.completed', item: { id: 'm', type: 'agent_message', text } });
  out({ type: 'turn.completed', usage: { input_tokens: input, cached_input_tokens: 0, output_tokens: 100 } });
};
if (task.includes('[[hang]]')) {
  start();
  fs.writeFileSync(path.join(dir, 'hang-started'), String(process.pid));
  setInterval(() => {}, 1000);
} else if (task.includes('[[talk]]')) {
  // Runs a command (its call goes in the log mid-turn), then waits to be let go before its usage.
  start();
  out({ type: 'item.started', item: { id: 'c1', type: 'command_execution', command: 'ls', status: 'in_progress' } });
  out({ type: 'item.completed', item: { id: 'c1', type: 'command_execution', command: 'ls', aggregated_output: 'a\\n', exit_code: 0, status: 'completed' } });
  fs.writeFileSync(path.join(dir, 'talk-started'), String(process.pid));
  const wait = () => (fs.existsSync(path.join(dir, 'go')) ? finish('done', 10) : setTimeout(wait, 20));
  wait();
} else if (task.includes('[[zero]]')) {
  // A program behind a server that does not count: it reports zeros for a real answer.
  start();
  out({ type: 'item.completed', item: { id: 'm', type: 'agent_message', text: 'an answer of some length '.repeat(20) } });
  out({ type: 'turn.completed', usage: { input_tokens: 0, cached_input_tokens: 0, output_tokens: 0 } });
} else if (task.includes('[[spend]]')) {
  // Spends only once the hanging sibling runs, so the budget is used up under a running child.
  const wait = () => (fs.existsSync(path.join(dir, 'hang-started')) ? (start(), finish('spent a lot', 30000)) : setTimeout(wait, 20));
  wait();
} else {
  start();
  finish('quick answer', 10);
}
`;

describe('remote: a subtree budget holds for a remote child (real processes)', function () {
  this.timeout(60_000);
  const w = harnessAndHomePerTest();
  beforeEach(async () => {
    w.home = programHome('fake-budget');
    const fake = path.join(w.home, 'fake-codex');
    fs.writeFileSync(fake, FAKE, { mode: 0o755 });
    w.t = await makeHarness(w.server, {
      model: { baseURL: w.server.baseURL, name: 'test-model', apiKey: 'test', maxRetries: 0, timeoutMs: 10_000, maxTokens: 64 },
      // Without the change the hanging child would run on: the idle timeout ends it (as an error) instead of mocha's.
      remote: { codex: { command: fake, model: 'fake-model', env: { FAKE_DIR: w.home }, graceMs: 300, idleTimeoutMs: 15_000 } },
    });
  });
  const runs = () =>
    fs.existsSync(path.join(w.home, 'runs.log')) ? fs.readFileSync(path.join(w.home, 'runs.log'), 'utf8').split('\n').filter(Boolean).length : 0;
  const idOf = (label: string) => w.t.h.store.list().find((h) => h.title === label)!.id;
  const lastEnd = async (id: string) => ofType((await w.t.h.store.inspect(id)).events, 'turn/end').at(-1)!;
  const pgidOf = async (id: string) => ofType((await w.t.h.store.inspect(id)).events, 'subagent/remote')[0]?.pgid;

  it('a remote child whose task cannot fit the budget left ends with budget, its program never started', async () => {
    const root = await w.t.h.createSession();
    await w.t.h.setBudget(root.id, { maxTokens: 2000 });
    const run = await w.t.h.subagents.start(root, 'codex', { prompt: 'a quick task' });
    const r = await run.result;
    await run.dispose();
    assert.equal(r.stopReason, 'budget', r.error);
    assert.match(r.error ?? '', /\(2000 tokens\) cannot take the next request: 2000 tokens are left and this request may take \d+/);
    assert.match(r.error ?? '', /codex was not started/);
    const s = await w.t.h.store.inspect(run.id);
    assertValidTurn(s.events);
    assert.equal(ofType(s.events, 'turn/end')[0].errorCode, 'budget');
    assert.equal(runs(), 0, 'the program never ran');
    assert.equal(w.t.h.store.summaryRef(run.id)!.lastStopReason, 'budget');

    // The same task under a budget it fits: the program runs (the check is what held it back).
    await w.t.h.setBudget(root.id, { maxTokens: 100_000 });
    const again = await w.t.h.subagents.start(root, 'codex', { prompt: 'a quick task' });
    const r2 = await again.result;
    await again.dispose();
    assert.equal(r2.stopReason, 'completed', r2.error);
    assert.equal(runs(), 1);
  });

  it('a remote turn holds its reservation until its turn ends, not only until the first thing it writes (session 48)', async () => {
    const root = await w.t.h.createSession();
    await w.t.h.setBudget(root.id, { maxTokens: 100_000 });
    const run = await w.t.h.subagents.start(root, 'codex', { prompt: '[[talk]] work a while' });
    for (let i = 0; i < 1000 && !fs.existsSync(path.join(w.home, 'talk-started')); i++) await new Promise((r) => setTimeout(r, 20));
    // Its command's call is in the log: the program is still working and has reported no usage.
    const called = async () => w.t.h.store.has(run.id) && ofType((await w.t.h.store.inspect(run.id)).events, 'tool/result').length > 0;
    for (let i = 0; i < 250 && !(await called()); i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(await called(), 'its command is in the log');
    const held = w.t.h.cost.budgets.spent(root.id)!.reservedTokens;
    fs.writeFileSync(path.join(w.home, 'go'), '');
    const r = await run.result;
    await run.dispose();
    assert.equal(r.stopReason, 'completed', r.error);
    assert.ok(held >= 4096, `the running program still holds its reserve (held ${held})`);
    assert.equal(w.t.h.cost.budgets.spent(root.id)!.reservedTokens, 0, 'released once its turn ended');
  });

  it("a running remote child is stopped when a sibling uses its subtree's budget up; the parent's notice says budget", async () => {
    // The root delegates a hanging child in the background, then one that spends 30k tokens.
    w.server.enqueue(
      { toolCalls: [{ name: 'delegate_codex', arguments: { prompt: '[[hang]] keep working', label: 'hang', mode: 'background' } }] },
      { toolCalls: [{ name: 'delegate_codex', arguments: { prompt: '[[spend]] spend it', label: 'spend' } }] },
    );
    const root = await w.t.h.createSession();
    await w.t.h.setBudget(root.id, { maxTokens: 20_000 });
    await root.accept('delegate');
    for (let i = 0; i < 1000 && !fs.existsSync(path.join(w.home, 'hang-started')); i++) await new Promise((r) => setTimeout(r, 20));
    await w.t.h.settle();

    const hang = idOf('hang');
    const spend = idOf('spend');
    assert.equal((await lastEnd(spend)).stopReason, 'completed', 'the spending child finished its turn');
    const end = await lastEnd(hang);
    assert.equal(end.stopReason, 'budget', end.error);
    assert.equal(end.errorCode, 'budget');
    assert.match(end.error ?? '', /\(20000 tokens\) is used up: \d+ tokens are spent\. A human can raise the budget/);
    assert.match(end.error ?? '', /codex was stopped/);
    const pgid = await pgidOf(hang);
    assert.ok(pgid, 'the program had started');
    assert.equal(groupAlive(pgid), false, 'its process group is gone');
    assertValidTurn((await w.t.h.store.inspect(hang)).events);

    // A background one-shot's answer is a job result (seed 000 §二), not a settlement notice.
    const notices = ofType(root.session.events, 'user/message').filter((m) => m.source.kind === 'subagent-result' && m.source.fromSession === hang);
    assert.equal(notices.length, 1, 'the parent is told once');
    assert.equal(notices[0].source.kind === 'subagent-result' && notices[0].source.stopReason, 'budget');
    assert.match(notices[0].text, /finished: budget/);
    assert.match(notices[0].text, /is used up/);
    assert.equal(w.t.h.store.summaryRef(root.id)!.lastStopReason, 'budget', 'the root stops on the budget too');
  });

  it('a remote child stopped before its program reported usage still counts the prompt it was handed (session 48)', async () => {
    const root = await w.t.h.createSession();
    await w.t.h.setBudget(root.id, { maxTokens: 1_000_000 });
    const task = `[[hang]] keep working ${'on this long task '.repeat(200)}`;
    const run = await w.t.h.subagents.start(root, 'codex', { prompt: task });
    for (let i = 0; i < 1000 && !fs.existsSync(path.join(w.home, 'hang-started')); i++) await new Promise((r) => setTimeout(r, 20));
    await w.t.h.interruptSubtree(run.id);
    const r = await run.result;
    await run.dispose();
    assert.equal(r.stopReason, 'interrupted', r.error);
    const s = w.t.h.store.summaryRef(run.id)!;
    assert.ok(s.tokens.prompt >= Math.ceil(task.length / 4), `its task's prompt counts (${s.tokens.prompt} prompt tokens)`);
    assert.equal(s.estimated, true, 'as an estimate');
    assert.equal(w.t.h.cost.budgets.spent(root.id)!.tokens.prompt, s.tokens.prompt, 'and against the budget');
  });

  it('a remote child whose program reports zero usage for a real answer counts an estimate, not nothing (session 50)', async () => {
    const root = await w.t.h.createSession();
    await w.t.h.setBudget(root.id, { maxTokens: 1_000_000 });
    const task = `[[zero]] answer this ${'with care '.repeat(300)}`;
    const run = await w.t.h.subagents.start(root, 'codex', { prompt: task });
    const r = await run.result;
    await run.dispose();
    assert.equal(r.stopReason, 'completed', r.error);
    const s = w.t.h.store.summaryRef(run.id)!;
    assert.ok(s.tokens.prompt >= Math.ceil(task.length / 4), `its task's prompt counts (${s.tokens.prompt} prompt tokens)`);
    assert.ok(s.tokens.completion > 0, 'its answer counts');
    assert.equal(s.estimated, true, 'as an estimate');
    assert.equal(w.t.h.cost.budgets.spent(root.id)!.tokens.prompt, s.tokens.prompt, 'and against the budget');
  });

  it('a human lowering the budget below what was spent stops a running remote child', async () => {
    const root = await w.t.h.createSession();
    await root.accept('spend a little'); // the root's own request: a few hundred tokens under its budget
    await w.t.h.settle();
    await w.t.h.setBudget(root.id, { maxTokens: 1_000_000 });
    const run = await w.t.h.subagents.start(root, 'codex', { prompt: '[[hang]] keep working' });
    let pgid: number | undefined;
    for (let i = 0; i < 1000 && !(pgid = ofType(w.t.h.resident(run.id)?.session.events ?? [], 'subagent/remote')[0]?.pgid); i++)
      await new Promise((r) => setTimeout(r, 10));
    assert.ok(pgid, 'the program started');
    await w.t.h.setBudget(root.id, { maxTokens: 10 });
    const r = await run.result;
    await run.dispose();
    assert.equal(r.stopReason, 'budget', r.error);
    assert.match(r.error ?? '', /\(10 tokens\) is used up/);
    assert.equal(groupAlive(pgid), false);
  });
});
