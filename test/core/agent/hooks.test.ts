import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Agent } from '../../../src/core/agent/agent';
import type { ToolProgress } from '../../../src/core/agent/config';
import type { SessionEvent, ToolResultEvent } from '../../../src/core/session/events';
import { fail, ok } from '../../../src/core/tools/result';
import type { ToolErrorCode } from '../../../src/core/tools/tool';
import { agentConfigOf, harnessPerTest } from '../../support/harness';

const results = (evs: readonly SessionEvent[]) => evs.filter((e): e is ToolResultEvent => e.type === 'tool/result');

describe('agent: hooks around each tool call, and progress from a running tool', () => {
  const w = harnessPerTest();

  it('beforeToolCall answers instead of the tool (a block); afterToolCall sees every result with its code and may replace it', async () => {
    w.server.enqueue(
      {
        toolCalls: [
          { id: 'w1', name: 'write_file', arguments: { path: 'out.txt', content: 'x' } },
          { id: 'r1', name: 'read_file', arguments: { path: 'missing.txt' } },
          { id: 'u1', name: 'no_such_tool', arguments: {} },
          { id: 'b1', name: 'read_file', arguments: '{"path": ' },
        ],
      },
      { text: 'done' },
    );
    const before: string[] = [];
    const after: { callId: string; code?: ToolErrorCode; args: boolean }[] = [];
    const agent = new Agent({
      ...(await agentConfigOf(w.t.h)),
      beforeToolCall: ({ call, args }) => {
        before.push(`${call.id}:${call.name}:${JSON.stringify(args)}`);
        return call.name === 'write_file' ? fail('APPROVAL_DENIED', 'writes are off in this test') : undefined;
      },
      afterToolCall: ({ call, args, result }) => {
        after.push({ callId: call.id, code: result.code, args: args !== undefined });
        return call.id === 'r1' ? { ...result, content: `${result.content} (seen by the hook)` } : undefined;
      },
    });
    await agent.accept('go');
    await agent.idle();
    assert.equal(agent.lastTurn?.stopReason, 'completed');
    assert.equal(fs.existsSync(path.join(w.t.workspace, 'out.txt')), false, 'the blocked write never ran');
    // Unknown tools and arguments that do not parse are answered before any hook is asked.
    assert.deepEqual(before.sort(), ['r1:read_file:{"path":"missing.txt"}', 'w1:write_file:{"path":"out.txt","content":"x"}']);
    assert.deepEqual(
      after.sort((a, b) => a.callId.localeCompare(b.callId)),
      [
        { callId: 'b1', code: 'INVALID_ARGUMENTS', args: false },
        { callId: 'r1', code: 'NOT_FOUND', args: true },
        { callId: 'u1', code: 'UNKNOWN_TOOL', args: false },
        { callId: 'w1', code: 'APPROVAL_DENIED', args: true },
      ],
    );
    const byId = new Map(results(agent.session.events).map((r) => [r.callId, r]));
    assert.equal(byId.get('w1')?.content, 'writes are off in this test');
    assert.equal(byId.get('w1')?.isError, true);
    assert.match(byId.get('r1')!.content, /\(seen by the hook\)$/);
  });

  it('a throwing beforeToolCall blocks the call (BLOCKED, fail closed); a throwing afterToolCall keeps the result', async () => {
    fs.writeFileSync(path.join(w.t.workspace, 'a.txt'), 'alpha\n');
    w.server.enqueue(
      {
        toolCalls: [
          { id: 'w1', name: 'write_file', arguments: { path: 'out.txt', content: 'x' } },
          { id: 'r1', name: 'read_file', arguments: { path: 'a.txt' } },
        ],
      },
      { text: 'done' },
    );
    const codes: (ToolErrorCode | undefined)[] = [];
    const agent = new Agent({
      ...(await agentConfigOf(w.t.h)),
      beforeToolCall: async ({ call }) => {
        if (call.name === 'write_file') throw new Error('policy service down');
        return undefined;
      },
      afterToolCall: ({ result }) => {
        codes.push(result.code);
        throw new Error('view bug');
      },
    });
    await agent.accept('go');
    await agent.idle();
    assert.equal(agent.lastTurn?.stopReason, 'completed');
    assert.equal(fs.existsSync(path.join(w.t.workspace, 'out.txt')), false);
    const byId = new Map(results(agent.session.events).map((r) => [r.callId, r]));
    assert.match(byId.get('w1')!.content, /^write_file was not run: a check before it failed \(policy service down\)/);
    assert.match(byId.get('r1')!.content, /alpha/);
    assert.equal(byId.get('r1')!.isError, false);
    assert.ok(codes.includes('BLOCKED'));
  });

  it('a tool gets its callId and reports progress; listeners hear it, the log and the model do not, and a throwing listener harms nothing', async () => {
    const seenIds: (string | undefined)[] = [];
    w.t.h.tools.register({
      name: 'slow_count',
      description: 'Counts to three, saying how far it got.',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      async execute(_args, ctx) {
        seenIds.push(ctx.callId);
        for (const n of [1, 2, 3]) ctx.progress?.(`counted ${n} of 3`);
        return ok('3');
      },
    });
    w.server.enqueue({ toolCalls: [{ id: 'c1', name: 'slow_count', arguments: {} }] }, { text: 'done' });
    const fromConfig: ToolProgress[] = [];
    const agent = new Agent({ ...(await agentConfigOf(w.t.h)), onProgress: (p) => fromConfig.push(p) });
    const heard: ToolProgress[] = [];
    agent.onProgress(() => {
      throw new Error('a broken view');
    });
    agent.onProgress((p) => heard.push(p));
    await agent.accept('count');
    await agent.idle();
    assert.deepEqual(seenIds, ['c1']);
    const expected = [1, 2, 3].map((n) => ({ callId: 'c1', tool: 'slow_count', text: `counted ${n} of 3` }));
    assert.deepEqual(heard, expected);
    assert.deepEqual(fromConfig, expected);
    assert.equal(results(agent.session.events)[0].content, '3');
    assert.ok(!JSON.stringify(agent.session.events).includes('counted'), 'progress is not in the log');
    assert.ok(!JSON.stringify(w.server.requests.map((r) => r.body)).includes('counted'), 'nor sent to the model');
  });
});
