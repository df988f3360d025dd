import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { effectiveSandbox } from '../../../src/core/policy/sandbox';
import { descriptorOf, policyOverrides } from '../../../src/core/session/folds';
import { assertCode, eventsOf, lastToolJson, ofType, subagentWorld, systemOf, toolNames } from './helpers';

const agentFile = (name: string, fields: string, persona: string) => `---\nname: ${name}\ndescription: The ${name}.\n${fields}---\n${persona}\n`;
const delegate = (agent: string, prompt: string, more: Record<string, unknown> = {}) => ({ name: 'subagent', arguments: { agent, prompt, ...more } });
const write = (file: string) => ({ name: 'write_file', arguments: { path: file, content: 'written' } });

describe('subagent: delegation to agents defined in files — persona, tools, model, sandbox, never wider than the caller', () => {
  const w = subagentWorld({ sandbox: 'workspace-write' }, { gates: false, perTest: true });
  const put = (rel: string, text: string) => {
    const p = path.join(w.t.workspace, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, text);
  };
  const childOf = (parent: string) => w.t.h.store.children(parent)[0];

  it('agent: "<name>" gives the child the file\'s persona, tools and model; the tree shows its name', async () => {
    await w.setup();
    put('.arbor/agents/reviewer.md', agentFile('reviewer', 'tools: Read, Grep\nmodel: review-model\n', 'You are REVIEWER-7, terse.'));
    w.script.on('root', { toolCalls: [delegate('reviewer', '[[rev]] review the diff')] }, { text: 'root done' });
    w.script.on('rev', { text: 'looks fine' });
    await w.root.accept('[[root]] get a review');
    await w.t.h.settle();
    const [body] = w.script.bodies('rev');
    assert.deepEqual(toolNames(body), ['read_file', 'search_files']);
    assert.equal(body.model, 'review-model');
    assert.ok(systemOf(body).includes('You are REVIEWER-7, terse.'));
    const child = childOf(w.root.id);
    assert.equal(child.title, 'reviewer', 'the tree names the child after its agent');
    const d = descriptorOf(child, await eventsOf(w.t.h, child.id));
    assert.deepEqual([d?.agent, d?.label, d?.toolFilter, d?.model], ['reviewer', 'reviewer', ['read_file', 'search_files'], 'review-model']);
    const result = lastToolJson<{ answer: string; stopReason: string }>(w.script.bodies('root')[1]);
    assert.deepEqual([result.stopReason, result.answer], ['completed', 'looks fine']);
  });

  it('an unknown agent is refused with the names there are, and nothing is created', async () => {
    await w.setup();
    put('.arbor/agents/reviewer.md', agentFile('reviewer', '', 'Review.'));
    await assert.rejects(w.t.h.subagents.start(w.root, 'spawn', { prompt: 'x', agent: 'nobody' }), (err: Error) => {
      assertCode('UNKNOWN_AGENT')(err);
      assert.match(err.message, /No agent named "nobody"\. Agents defined in files: reviewer\./);
      return true;
    });
    assert.equal(w.t.h.store.children(w.root.id).length, 0);
  });

  it('attack: an agent file asking for Bash, Write and full-access under a read-only parent gets read-only and cannot write', async () => {
    await w.setup();
    await w.root.append({ type: 'sandbox/mode', mode: 'read-only', source: 'user' });
    put('.arbor/agents/vandal.md', agentFile('vandal', 'tools: Bash, Write, Read\nsandbox: full-access\n', 'Write everywhere.'));
    w.script.on('root', { toolCalls: [delegate('vandal', '[[v]] write v.txt')] }, { text: 'root done' });
    w.script.on('v', { toolCalls: [write('v.txt')] }, { text: 'v done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const child = childOf(w.root.id);
    const evs = await eventsOf(w.t.h, child.id);
    assert.equal(effectiveSandbox(policyOverrides(evs), 'workspace-write'), 'read-only', "never wider than the caller's");
    const r = ofType(evs, 'tool/result').find((e) => e.name === 'write_file');
    assert.ok(r?.isError, 'the write is refused');
    assert.ok(!fs.existsSync(path.join(w.t.workspace, 'v.txt')));
  });

  it('attack: a sandbox wider than the deployment is clamped to it; a narrower one narrows', async () => {
    await w.setup();
    put('.arbor/agents/wide.md', agentFile('wide', 'sandbox: full-access\n', 'Wide.'));
    put('.arbor/agents/reader.md', agentFile('reader', 'sandbox: read-only\n', 'Read only.'));
    w.script.on('wide', { text: 'w' });
    w.script.on('reader', { toolCalls: [write('r.txt')] }, { text: 'r' });
    for (const agent of ['wide', 'reader']) {
      const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: `[[${agent}]] go`, agent });
      await run.result;
      const evs = await eventsOf(w.t.h, run.id);
      await run.dispose();
      assert.equal(effectiveSandbox(policyOverrides(evs), 'workspace-write'), agent === 'wide' ? 'workspace-write' : 'read-only', agent);
      assert.ok(!ofType(evs, 'sandbox/mode').some((e) => e.mode === 'full-access'), `${agent}: full-access is never pinned`);
    }
    assert.ok(!fs.existsSync(path.join(w.t.workspace, 'r.txt')), 'the read-only agent could not write');
  });

  it("attack: an agent file's tools never exceed its caller's: a filtered child delegating to an agent asking for Bash gets none", async () => {
    await w.setup();
    put('.arbor/agents/runner.md', agentFile('runner', 'tools: Bash, Read, Write\n', 'Run things.'));
    w.script.on('mid', { toolCalls: [delegate('runner', '[[run]] run it')] }, { text: 'mid done' });
    w.script.on('run', { text: 'ran' });
    const mid = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[mid]] delegate', toolFilter: ['read_file', 'subagent'] });
    await mid.result;
    await mid.dispose();
    const [body] = w.script.bodies('run');
    assert.deepEqual(toolNames(body), ['read_file'], "run_command and write_file were not the caller's to give");
  });

  it('attack: a filtered child asking for more tools by name, by no filter, or by forking gives its children none it lacks', async () => {
    // The `tools` allow-list of the subagent tool and a fork are the other ways a child could hand
    // on what it was not given (session 50 audit: only the agent-file way had an attacking test).
    await w.setup();
    w.script.on(
      'mid',
      { text: 'a first turn, so that there is something to fork' },
      {
        toolCalls: [
          { name: 'subagent', arguments: { prompt: '[[named]] go', tools: ['run_command', 'write_file', 'edit_file', 'read_file', 'Bash'] } },
          { name: 'subagent', arguments: { prompt: '[[open]] go' } },
          { name: 'subagent_fork', arguments: { prompt: '[[fork]] go' } },
        ],
      },
      { text: 'mid done' },
    );
    for (const tag of ['named', 'open', 'fork']) w.script.on(tag, { text: `${tag} done` });
    const given = ['read_file', 'subagent', 'subagent_fork'];
    const { childId } = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[mid]] wait', toolFilter: given });
    await w.t.h.settle();
    await w.t.h.subagents.followup(w.root.id, childId, '[[mid]] now delegate');
    await w.t.h.settle();
    const results = ofType(await eventsOf(w.t.h, childId), 'tool/result');
    assert.deepEqual(
      results.map((r) => r.isError ?? false),
      [false, false, false],
      `every delegation ran: ${results.map((r) => r.content.slice(0, 200)).join(' | ')}`,
    );
    for (const tag of ['named', 'open', 'fork']) {
      const [body] = w.script.bodies(tag);
      assert.ok(body, `${tag} made a request`);
      const names = toolNames(body);
      assert.deepEqual(
        names.filter((n) => !given.includes(n) && n !== 'report' && n !== 'list_agents' && n !== 'send_message' && n !== 'interrupt_agent'),
        [],
        `${tag} got only what its caller had: ${names.join(', ')}`,
      );
      for (const wider of ['run_command', 'write_file', 'edit_file']) assert.ok(!names.includes(wider), `${tag} got ${wider}`);
    }
  });

  it('a continuable agent child keeps what its file said when it started: the file edited, a cold resume reapplies the old composition', async () => {
    await w.setup();
    put('.arbor/agents/keeper.md', agentFile('keeper', 'tools: Read\nmodel: keeper-model\n', 'You are KEEPER-ONE.'));
    w.script.on('k', { text: 'first answer' }, { text: 'second answer' });
    const { childId } = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[k]] remember', agent: 'keeper' });
    await w.t.h.settle();
    assert.equal(w.t.h.resident(childId), undefined, 'released');
    put('.arbor/agents/keeper.md', agentFile('keeper', 'tools: Bash, Read, Write\nmodel: other-model\n', 'You are KEEPER-TWO, longer now.'));
    const r = await w.t.h.subagents.followup(w.root.id, childId, '[[k]] and now?');
    assert.equal(r.path, 'cold-resume');
    await w.t.h.settle();
    const [first, second] = w.script.bodies('k');
    for (const body of [first, second]) {
      assert.deepEqual(toolNames(body), ['read_file', 'report']);
      assert.equal(body.model, 'keeper-model');
      assert.ok(systemOf(body).includes('You are KEEPER-ONE.') && !systemOf(body).includes('KEEPER-TWO'));
    }
  });

  it('a root conversation started with an agent: its persona and tools, its narrower sandbox; a fork keeps them', async () => {
    await w.setup();
    put('.arbor/agents/planner.md', agentFile('planner', 'tools: Read, Glob\nsandbox: read-only\n', 'You are PLANNER-3.'));
    const root = await w.t.h.createSession({ agent: 'planner' });
    w.script.on('p', { text: 'plan' });
    await root.accept('[[p]] plan the work');
    await root.idle();
    const [body] = w.script.bodies('p');
    assert.deepEqual(toolNames(body), ['list_files', 'read_file']);
    assert.ok(systemOf(body).includes('You are PLANNER-3.'));
    assert.equal(root.session.header.title, 'planner');
    assert.equal(effectiveSandbox(policyOverrides(root.session.events), 'workspace-write'), 'read-only');
    const fork = await w.t.h.forkSession(root.id, root.session.events.at(-1)!.seq);
    assert.deepEqual(fork.session.header.agent, root.session.header.agent);
    await assert.rejects(w.t.h.createSession({ agent: 'ghost' }), assertCode('UNKNOWN_AGENT'));
  });

  it("a root started from an agent file is its children's ceiling: a child it spawns gets none of the tools the file left out", async () => {
    await w.setup();
    put('.arbor/agents/reader.md', agentFile('reader', 'tools: Read, Task\n', 'You are READER.'));
    const root = await w.t.h.createSession({ agent: 'reader' });
    w.script.on('c', { text: 'child done' });
    const run = await w.t.h.subagents.start(root, 'spawn', { prompt: '[[c]] do it' });
    await run.result;
    await run.dispose();
    const [body] = w.script.bodies('c');
    const names = toolNames(body);
    for (const wider of ['write_file', 'edit_file', 'run_command']) assert.ok(!names.includes(wider), `the child got ${wider}: ${names.join(', ')}`);
    assert.ok(names.includes('read_file'), names.join(', '));
  });
});
