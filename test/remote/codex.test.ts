import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { until } from '../support/harness';
import {
  assertChildFails,
  assertPlainAnswer,
  assertProgramMissing,
  assertValidTurn,
  byWire,
  CODEX_BIN,
  finishedChild,
  groupAlive,
  ofType,
  PINNED,
  pgidOf,
  remoteWorld,
} from './world';

describe('remote: codex (the real program, offline)', function () {
  this.timeout(120_000);
  const w = remoteWorld();

  it('is the pinned version', () => {
    assert.equal(execFileSync(CODEX_BIN, ['--version'], { encoding: 'utf8' }).trim(), `codex-cli ${PINNED.codex}`);
  });

  it('a plain answer through delegate_codex: its own transcript, subagent/remote, usage with cache tokens in list_agents, no process left', async () => {
    await assertPlainAnswer(w, {
      tool: 'delegate_codex',
      wire: 'responses',
      program: 'codex',
      version: `codex-cli ${PINNED.codex}`,
      answer: 'Hello from codex',
    });
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
    const { run, r } = await finishedChild(t, 'codex', 'write a file');
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

  // Decision 0125 (checked in s60): the program's own sandbox flag is the clamped mode, so an
  // explicit `--sandbox read-only` over a full-access deployment runs `codex exec -s read-only`.
  for (const ceiling of [true, false]) {
    it(`a full-access deployment ${ceiling ? 'under a read-only ceiling: the real program runs read-only, nothing written' : '(control, no ceiling): the same command writes'}`, async () => {
      const t = await w.reopen({ sandbox: 'full-access', ...(ceiling ? { ceiling: { sandbox: 'read-only', by: 'cli-sandbox' } } : {}) });
      byWire(w.server, {
        responses: [{ toolCalls: [{ name: 'exec_command', arguments: { cmd: 'sleep 0.3; echo x > made-by-codex.txt' } }] }, { text: 'tried' }],
      });
      const { run, r } = await finishedChild(t, 'codex', 'write a file');
      assert.equal(r.stopReason, 'completed', r.error);
      assert.equal(fs.existsSync(path.join(t.workspace, 'made-by-codex.txt')), !ceiling);
      if (!ceiling) return;
      const [res] = ofType((await t.h.store.inspect(run.id)).events, 'tool/result');
      assert.equal(res.isError, true);
      assert.match(res.content, /Read-only file system/);
    });
  }

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
      await assertChildFails(w.t, 'codex', /^Codex/, pattern);
    });
  }

  it('a missing binary: an error naming the setting', async () => {
    const t = await w.reopen({ remote: { codex: { command: path.join(w.homes.codex, 'no-such-codex') } } });
    await assertProgramMissing(t, 'codex', /REMOTE_NOT_FOUND: Codex was not found: ".*no-such-codex".*arbor\.remote\.codex\.command/);
  });
});
