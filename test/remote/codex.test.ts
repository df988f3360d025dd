import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { listAgents } from '../../src/core/subagent/control';
import { until } from '../support/harness';
import { assertValidTurn, byWire, CODEX_BIN, groupAlive, ofType, PINNED, pgidOf, remoteWorld } from './world';

describe('remote: codex (the real program, offline)', function () {
  this.timeout(120_000);
  const w = remoteWorld();

  it('is the pinned version', () => {
    assert.equal(execFileSync(CODEX_BIN, ['--version'], { encoding: 'utf8' }).trim(), `codex-cli ${PINNED.codex}`);
  });

  it('a plain answer through delegate_codex: its own transcript, subagent/remote, usage with cache tokens in list_agents, no process left', async () => {
    byWire(w.server, {
      chat: [{ toolCalls: [{ name: 'delegate_codex', arguments: { prompt: 'Say hello', label: 'cx' } }] }, { text: 'parent done' }],
      responses: [{ text: 'Hello from codex', reasoning: 'a short thought' }],
    });
    const root = await w.t.h.createSession();
    await root.accept('delegate it');
    await w.t.h.settle();
    const [child] = w.t.h.store.children(root.id);
    assert.ok(child, 'a child in the tree');
    const s = await w.t.h.store.inspect(child.id);
    const remote = ofType(s.events, 'subagent/remote');
    assert.equal(remote.length, 1);
    assert.equal(remote[0].program, 'codex');
    assert.equal(remote[0].version, `codex-cli ${PINNED.codex}`);
    assert.match(remote[0].externalId, /^[0-9a-f-]{36}$/);
    assert.ok(remote[0].pgid && remote[0].pgid > 1);
    assert.equal(groupAlive(remote[0].pgid!), false, 'no process left in its group');
    const msgs = ofType(s.events, 'assistant/message');
    assert.equal(msgs.map((m) => m.text).join(''), 'Hello from codex');
    assert.equal(msgs[0].reasoning, 'a short thought');
    const usage = msgs[msgs.length - 1].usage!;
    const served = w.server.requests.filter((r) => r.wire === 'responses');
    assert.equal(served.length, 1);
    assert.deepEqual(usage, { promptTokens: served[0].promptTokens, completionTokens: usage.completionTokens, cacheHitTokens: served[0].cacheHitTokens });
    assert.ok(usage.completionTokens > 0);
    assert.equal(ofType(s.events, 'turn/end')[0].stopReason, 'completed');
    assertValidTurn(s.events);
    // The parent got the answer as its tool result.
    const parent = await w.t.h.store.inspect(root.id);
    const result = ofType(parent.events, 'tool/result').find((r) => r.name === 'delegate_codex')!;
    assert.equal(result.isError, false);
    assert.match(result.content, /Hello from codex/);
    const [listed] = await listAgents(w.t.h.subagents, root.id);
    assert.equal(listed.provider, 'codex');
    assert.deepEqual(listed.remote, { program: 'codex', version: `codex-cli ${PINNED.codex}` }, 'list_agents names the program and its version');
    assert.deepEqual(listed.tokens, { prompt: usage.promptTokens, completion: usage.completionTokens, cacheHit: usage.cacheHitTokens });
    // Remote children are never compacted and write no request header of ours.
    assert.equal(ofType(s.events, 'request/header').length, 0);
  });

  it('a shell round trip shows in the child transcript as codex:shell and its result', async () => {
    byWire(w.server, { responses: [{ toolCalls: [{ name: 'exec_command', arguments: { cmd: 'sleep 0.3; echo remote-ok' } }] }, { text: 'ran it' }] });
    const root = await w.t.h.createSession();
    const run = await w.t.h.subagents.start(root, 'codex', { prompt: 'run a command', model: 'gpt-5.5' });
    const r = await run.result;
    await run.dispose();
    assert.equal(r.stopReason, 'completed', r.error);
    assert.equal(r.text, 'ran it');
    const s = await w.t.h.store.inspect(run.id);
    const calls = ofType(s.events, 'assistant/message').flatMap((m) => m.toolCalls ?? []);
    assert.equal(calls.length, 1);
    assert.equal(calls[0].name, 'codex:shell');
    assert.match(JSON.parse(calls[0].arguments).command, /echo remote-ok/);
    const [res] = ofType(s.events, 'tool/result');
    assert.equal(res.callId, calls[0].id);
    assert.equal(res.isError, false);
    assert.match(res.content, /remote-ok\n\(exit code 0\)/);
    assertValidTurn(s.events);
  });

  it('a read-only child: the real program refuses the write and the file stays absent', async () => {
    const t = await w.reopen({ sandbox: 'read-only' });
    byWire(w.server, {
      responses: [{ toolCalls: [{ name: 'exec_command', arguments: { cmd: 'sleep 0.3; echo x > made-by-codex.txt' } }] }, { text: 'tried' }],
    });
    const root = await t.h.createSession();
    const run = await t.h.subagents.start(root, 'codex', { prompt: 'write a file' });
    const r = await run.result;
    await run.dispose();
    assert.equal(r.stopReason, 'completed', r.error);
    assert.equal(fs.existsSync(path.join(t.workspace, 'made-by-codex.txt')), false, 'nothing written');
    const s = await t.h.store.inspect(run.id);
    const [res] = ofType(s.events, 'tool/result');
    assert.equal(res.name, 'codex:shell');
    assert.equal(res.isError, true);
    assert.match(res.content, /Read-only file system/);
    // The model saw the refusal too: the command's output went back to it.
    assert.match(JSON.stringify(w.server.requests.filter((q) => q.wire === 'responses')[1].body), /Read-only file system/);
  });

  for (const how of ['the parent interrupt', 'the panel (interruptSubtree)'] as const) {
    it(`cancel from ${how}: interrupted, the process group gone, no process left`, async () => {
      byWire(w.server, { responses: [{ text: 'partial answer that never ends', fault: { kind: 'stall', afterChunks: 1 } }] });
      const root = await w.t.h.createSession();
      const run = await w.t.h.subagents.start(root, 'codex', { prompt: 'long task' });
      const pgid = await pgidOf(() => w.t.h.resident(run.id)?.session.events ?? []);
      await until(() => w.server.requests.some((q) => q.wire === 'responses'), 30_000);
      if (how === 'the parent interrupt') void run.localAgent.cancel('interrupted', { keepInbox: false });
      else await w.t.h.interruptSubtree(run.id);
      const r = await run.result;
      await run.dispose();
      assert.equal(r.stopReason, 'interrupted');
      assert.equal(groupAlive(pgid), false, 'the group is gone');
      const s = await w.t.h.store.inspect(run.id);
      assert.equal(ofType(s.events, 'turn/end')[0].stopReason, 'interrupted');
    });
  }

  for (const [what, fault, pattern] of [
    ['a model 500', { kind: 'status', status: 500, message: 'the mock model broke' }, /500|Internal Server Error|the mock model broke|high demand/i],
    ['a cut stream', { kind: 'disconnect', afterChunks: 1 }, /stream|disconnect|closed|error/i],
  ] as const) {
    it(`${what} ends the child as error with a readable message`, async () => {
      byWire(w.server, { responses: [{ text: 'some words that are cut', fault }] });
      const root = await w.t.h.createSession();
      const run = await w.t.h.subagents.start(root, 'codex', { prompt: 'fail please' });
      const r = await run.result;
      await run.dispose();
      assert.equal(r.stopReason, 'error');
      assert.match(r.error ?? '', /^Codex/);
      assert.match(r.error ?? '', pattern);
      const s = await w.t.h.store.inspect(run.id);
      assertValidTurn(s.events);
    });
  }

  it('a missing binary: an error naming the setting', async () => {
    const t = await w.reopen({ remote: { codex: { command: path.join(w.homes.codex, 'no-such-codex') } } });
    const root = await t.h.createSession();
    const run = await t.h.subagents.start(root, 'codex', { prompt: 'hi' });
    const r = await run.result;
    await run.dispose();
    assert.equal(r.stopReason, 'error');
    assert.match(r.error ?? '', /REMOTE_NOT_FOUND: Codex was not found: ".*no-such-codex".*arbor\.remote\.codex\.command/);
  });
});
