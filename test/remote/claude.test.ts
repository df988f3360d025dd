import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { descriptorOf } from '../../src/core/session/folds';
import { onDeltas } from '../support/changes';
import { until } from '../support/harness';
import {
  assertChildFails,
  assertPlainAnswer,
  assertProgramMissing,
  assertValidTurn,
  byWire,
  CLAUDE_BIN,
  finishedChild,
  groupAlive,
  ofType,
  PINNED,
  pgidOf,
  remoteSettings,
  remoteWorld,
} from './world';

describe('remote: claude-code (the real program, offline)', function () {
  this.timeout(120_000);
  const w = remoteWorld();

  it('is the pinned version', () => {
    assert.equal(execFileSync(CLAUDE_BIN, ['--version'], { encoding: 'utf8' }).trim(), `${PINNED.claude} (Claude Code)`);
  });

  it('a plain answer through delegate_claude_code: its own transcript, subagent/remote, usage with cache tokens in list_agents, no process left', async () => {
    await assertPlainAnswer(w, {
      tool: 'delegate_claude_code',
      wire: 'messages',
      program: 'claude-code',
      version: `${PINNED.claude} (Claude Code)`,
      answer: 'Hello from claude',
    });
  });

  it('no model set: the descriptor records the model Claude Code ran (its own default, as it reported it), never a placeholder (seed 000 §六)', async () => {
    const t = await w.reopen({ remote: remoteSettings(w.server, w.homes, { claudeCode: { model: undefined } }) });
    byWire(w.server, {
      chat: [{ toolCalls: [{ name: 'delegate_claude_code', arguments: { prompt: 'Say hello', label: 'cx' } }] }, { text: 'parent done' }],
      messages: [{ text: 'Hello from claude' }],
    });
    const root = await t.h.createSession();
    await root.accept('delegate it');
    await t.h.settle();
    const [child] = t.h.store.children(root.id);
    const s = await t.h.store.inspect(child.id);
    assert.equal(ofType(s.events, 'turn/end')[0].stopReason, 'completed');
    const asked = w.server.requests.filter((r) => r.wire === 'messages').map((r) => r.body.model);
    assert.ok(asked.length > 0 && asked.every((m) => m === asked[0]), `the one model it asked for: ${asked.join(', ')}`);
    const ds = ofType(s.events, 'subagent/descriptor');
    // Unknown at the start (no model of Arbor's is claimed for it), recorded once the program said.
    assert.deepEqual([ds[0].provider, ds[0].modelProvider, ds[0].model], ['claude-code', 'anthropic', undefined]);
    const own = descriptorOf(s.header, s.events)!;
    assert.deepEqual([own.provider, own.modelProvider, own.model], ['claude-code', 'anthropic', asked[0]]);
    assert.ok(ofType(s.events, 'assistant/message').every((m) => m.model === asked[0]));
    assert.ok(!JSON.stringify(s.events).includes('claude-code default'));
  });

  it('a shell round trip shows in the child transcript as claude:Bash and its result', async () => {
    byWire(w.server, { messages: [{ toolCalls: [{ name: 'Bash', arguments: { command: 'echo remote-ok', description: 'echo' } }] }, { text: 'ran it' }] });
    const { run, r } = await finishedChild(w.t, 'claude-code', 'run a command');
    assert.equal(r.stopReason, 'completed', r.error);
    assert.equal(r.text, 'ran it');
    const s = await w.t.h.store.inspect(run.id);
    const calls = ofType(s.events, 'assistant/message').flatMap((m) => m.toolCalls ?? []);
    assert.equal(calls.length, 1);
    assert.equal(calls[0].name, 'claude:Bash');
    assert.match(JSON.parse(calls[0].arguments).command, /^echo remote-ok$/);
    const [res] = ofType(s.events, 'tool/result');
    assert.equal(res.callId, calls[0].id);
    assert.equal(res.isError, false);
    assert.match(res.content, /^remote-ok$/);
    assertValidTurn(s.events);
  });

  it('a read-only child: the real program refuses the write and the file stays absent', async () => {
    const t = await w.reopen({ sandbox: 'read-only' });
    byWire(w.server, {
      messages: [
        {
          toolCalls: [
            { name: 'Write', arguments: { file_path: path.join(t.workspace, 'made-by-claude.txt'), content: 'x' } },
            { name: 'Bash', arguments: { command: 'echo x > made-by-claude.txt', description: 'write' } },
          ],
        },
        { text: 'tried' },
      ],
    });
    const { run, r } = await finishedChild(t, 'claude-code', 'write a file');
    assert.equal(r.stopReason, 'completed', r.error);
    assert.equal(fs.existsSync(path.join(t.workspace, 'made-by-claude.txt')), false, 'nothing written');
    const s = await t.h.store.inspect(run.id);
    const results = ofType(s.events, 'tool/result');
    assert.deepEqual(
      results.map((x) => [x.name, x.isError]),
      [
        ['claude:Write', true],
        ['claude:Bash', true],
      ],
    );
    assert.match(results[1].content, /needs approval|permission/i);
  });

  for (const how of ['the parent interrupt', 'the panel (interruptSubtree)'] as const) {
    it(`cancel from ${how}: interrupted, the process group gone, no process left`, async () => {
      byWire(w.server, { messages: [{ text: 'partial answer that never ends', chunkSize: 15, fault: { kind: 'stall', afterChunks: 1 } }] });
      const root = await w.t.h.createSession();
      let streamed = '';
      const off = onDeltas(w.t.h, (_id, kind, d) => {
        if (kind === 'text') streamed += d;
      });
      const run = await w.t.h.subagents.start(root, 'claude-code', { prompt: 'long task' });
      const pgid = await pgidOf(() => w.t.h.resident(run.id)?.session.events ?? []);
      await until(() => w.server.requests.some((q) => q.wire === 'messages'), 30_000);
      // What the user watched arrive before Stop (issue 21.3).
      await until(() => streamed.length > 0, 30_000);
      off();
      if (how === 'the parent interrupt') void run.localAgent.cancel('interrupted', { keepInbox: false });
      else await w.t.h.interruptSubtree(run.id);
      const r = await run.result;
      await run.dispose();
      assert.equal(r.stopReason, 'interrupted');
      assert.equal(groupAlive(pgid), false, 'the group is gone');
      const s = await w.t.h.store.inspect(run.id);
      assert.equal(ofType(s.events, 'turn/end')[0].stopReason, 'interrupted');
      // The stopped child keeps what it streamed, written before its turn closed.
      const said = ofType(s.events, 'assistant/message')
        .map((m) => m.text)
        .join('\n');
      assert.ok(said.includes(streamed.trim()), `the streamed ${JSON.stringify(streamed)} is in the log: ${JSON.stringify(said)}`);
    });
  }

  for (const [what, fault, pattern] of [
    ['a model 500', { kind: 'status', status: 500, message: 'the mock model broke' }, /500|Internal Server Error|the mock model broke|high demand/i],
    ['a cut stream', { kind: 'disconnect', afterChunks: 1 }, /ECONNRESET|stream|disconnect|closed|connection/i],
  ] as const) {
    it(`${what} ends the child as error with a readable message`, async () => {
      // Claude Code retries a cut stream once without streaming: that answer is cut too.
      byWire(w.server, {
        messages: [
          { text: 'some words that are cut', fault },
          { text: 'retry', fault },
        ],
      });
      await assertChildFails(w.t, 'claude-code', /^Claude Code/, pattern);
    });
  }

  it('a missing binary: an error naming the setting', async () => {
    const t = await w.reopen({ remote: { claudeCode: { command: path.join(w.homes.claude, 'no-such-claude') } } });
    await assertProgramMissing(t, 'claude-code', /REMOTE_NOT_FOUND: Claude Code was not found: ".*no-such-claude".*arbor\.remote\.claudeCode\.command/);
  });
});
