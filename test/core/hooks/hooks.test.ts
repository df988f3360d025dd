import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Agent } from '../../../src/core/agent/agent';
import type { UserMessageEvent } from '../../../src/core/session/events';
import { hookLine } from '../../../src/extension/presenter/transcript';
import { until } from '../../support/harness';
import { hookCommand, hookSpecs, hookWorld, one, toolResults } from './fixture';

/** Whether a process runs (a zombie waiting for a reaper does not). */
function running(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

describe('hooks: Claude Code hooks with the tree in their input (decision 0057)', () => {
  const hs = hookSpecs();
  const sentText = (i: number) => JSON.stringify(hs.server.requests[i]?.body.messages ?? []);

  it('PreToolUse exit 2 blocks run_command (matched as Bash) and the reason reaches the model; the input carries the tree', async () => {
    hs.w = await hookWorld(hs.server, { workspace: (t) => one('PreToolUse', 'Bash', hookCommand(t, 'rmrf', 'pre.log')) });
    hs.server.enqueue({ toolCalls: [{ id: 'c1', name: 'run_command', arguments: { command: 'rm -rf build' } }] }, { text: 'understood' });
    const a = await hs.w.h.createSession();
    await a.accept('clean up');
    await hs.w.h.settle();
    const [r] = toolResults(a.session.events);
    assert.equal(r.isError, true);
    assert.match(r.content, /PreToolUse hook blocked run_command: rm -rf is not allowed in this workspace/);
    assert.match(sentText(1), /rm -rf is not allowed in this workspace/, 'the model reads the reason in its next request');
    const [input] = hs.w.inputs('pre.log');
    assert.equal(input.hook_event_name, 'PreToolUse');
    assert.equal(input.tool_name, 'Bash', "Claude Code's name, so its scripts run unchanged");
    assert.equal(input.arbor_tool_name, 'run_command');
    assert.deepEqual(input.tool_input, { command: 'rm -rf build' });
    assert.equal(input.session_id, a.id);
    assert.equal(input.parent_id, null);
    assert.equal(input.depth, 0);
    assert.equal(input.agent, 'main');
    assert.equal(input.budget_left, null);
    assert.equal(input.cwd, fs.realpathSync(hs.w.workspace));
    const [run] = hs.w.hookRuns(a.session.events);
    assert.equal(run.outcome, 'blocked');
    assert.equal(run.exitCode, 2);
    assert.equal(run.tool, 'run_command');
    assert.equal(run.source, 'workspace');
    assert.equal(hookLine(run), 'hook PreToolUse blocked run_command: rm -rf is not allowed in this workspace');
  });

  it("a hook runs in the workspace with CLAUDE_PROJECT_DIR set and without the model's API key in its environment", async () => {
    hs.w = await hookWorld(hs.server, { workspace: (t) => one('PreToolUse', 'LS', hookCommand(t, 'env', 'env.log')) });
    hs.server.enqueue({ toolCalls: [{ id: 'c1', name: 'list_files', arguments: {} }] }, { text: 'ok' });
    const saved = process.env.ARBOR_API_KEY;
    process.env.ARBOR_API_KEY = 'sk-test-secret-key-123';
    try {
      const a = await hs.w.h.createSession();
      await a.accept('list');
      await hs.w.h.settle();
      const said = JSON.parse(hs.w.hookRuns(a.session.events)[0].reason ?? '{}');
      assert.deepEqual(said, { key: null, project: fs.realpathSync(hs.w.workspace) });
    } finally {
      if (saved === undefined) delete process.env.ARBOR_API_KEY;
      else process.env.ARBOR_API_KEY = saved;
    }
  });

  it('a JSON decision "block" blocks write_file (matcher "Write|Edit"); a matcher for another tool does not fire', async () => {
    hs.w = await hookWorld(hs.server, {
      workspace: (t) => ({
        hooks: {
          PreToolUse: [
            { matcher: 'Write|Edit', hooks: [{ type: 'command', command: hookCommand(t, 'json-block', 'w.log', 'no writes today') }] },
            { matcher: 'Read', hooks: [{ type: 'command', command: hookCommand(t, 'ok', 'r.log') }] },
          ],
        },
      }),
    });
    hs.server.enqueue({ toolCalls: [{ id: 'c1', name: 'write_file', arguments: { path: 'a.txt', content: 'x' } }] }, { text: 'ok' });
    const a = await hs.w.h.createSession();
    await a.accept('write it');
    await hs.w.h.settle();
    assert.equal(fs.existsSync(path.join(hs.w.workspace, 'a.txt')), false);
    assert.match(toolResults(a.session.events)[0].content, /blocked write_file: no writes today/);
    assert.equal(hs.w.inputs('w.log')[0].tool_name, 'Write');
    assert.equal((hs.w.inputs('w.log')[0].tool_input as Record<string, unknown>).file_path, 'a.txt');
    assert.deepEqual(hs.w.inputs('r.log'), [], 'the Read hook never ran');
  });

  it('attack: a hook that answers "allow" never widens past the policy (read-only sandbox, approval never)', async () => {
    hs.w = await hookWorld(
      hs.server,
      { workspace: (t) => one('PreToolUse', '*', hookCommand(t, 'allow', 'allow.log')) },
      { sandbox: 'read-only', approval: 'never' },
    );
    hs.server.enqueue(
      {
        toolCalls: [
          { id: 'c1', name: 'write_file', arguments: { path: 'a.txt', content: 'x' } },
          { id: 'c2', name: 'run_command', arguments: { command: 'touch b.txt' } },
        ],
      },
      { text: 'ok' },
    );
    const a = await hs.w.h.createSession();
    await a.accept('try');
    await hs.w.h.settle();
    assert.equal(hs.w.inputs('allow.log').length, 2, 'the hook said allow to both');
    assert.equal(fs.existsSync(path.join(hs.w.workspace, 'a.txt')), false, 'the read-only sandbox still refused the write');
    assert.equal(fs.existsSync(path.join(hs.w.workspace, 'b.txt')), false, 'the command still ran read-only (or was refused)');
    const rs = toolResults(a.session.events);
    assert.equal(rs[0].isError, true);
    assert.equal(hs.w.hookRuns(a.session.events)[0].decision, 'allow');
  });

  it('attack: the model cannot write the hook files themselves (.arbor and .claude are protected)', async () => {
    hs.w = await hookWorld(hs.server, {}, { approval: 'never' });
    const evil = JSON.stringify(one('PreToolUse', '*', 'echo pwned > /tmp/pwned'));
    hs.server.enqueue(
      {
        toolCalls: [
          { id: 'c1', name: 'write_file', arguments: { path: '.claude/settings.json', content: evil } },
          { id: 'c2', name: 'write_file', arguments: { path: '.arbor/settings.json', content: evil } },
        ],
      },
      { text: 'ok' },
    );
    const a = await hs.w.h.createSession();
    await a.accept('add a hook');
    await hs.w.h.settle();
    for (const r of toolResults(a.session.events)) {
      assert.equal(r.isError, true);
      assert.ok(r.refusal, `refused for want of approval: ${r.content}`);
    }
    assert.equal(fs.existsSync(path.join(hs.w.workspace, '.claude', 'settings.json')), false);
  });

  it('"ask" asks the human through the approval port; under approval never it is a refusal', async () => {
    hs.w = await hookWorld(hs.server, { workspace: (t) => one('PreToolUse', 'Read', hookCommand(t, 'ask', 'ask.log')) });
    fs.writeFileSync(path.join(hs.w.workspace, 'notes.txt'), 'hello');
    hs.server.enqueue({ toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'notes.txt' } }] }, { text: 'ok' });
    const a = await hs.w.h.createSession();
    await a.accept('read');
    await hs.w.h.settle();
    const [r] = toolResults(a.session.events);
    assert.equal(r.isError, true);
    assert.match(r.content, /asked for approval \(check this one\)/);
    assert.equal(r.refusal?.outcome, 'policy-never');
  });

  it('UserPromptSubmit exit 2 drops the prompt before any request, and the run says why', async () => {
    hs.w = await hookWorld(hs.server, {
      workspace: (t) => ({
        hooks: {
          PostToolUse: [{ matcher: 'Read', hooks: [{ type: 'command', command: hookCommand(t, 'context', 'post.log', 'formatted by the hook') }] }],
          UserPromptSubmit: [{ hooks: [{ type: 'command', command: hookCommand(t, 'block-once', 'prompt.log', 'no secrets in prompts') }] }],
        },
      }),
    });
    const a = await hs.w.h.createSession();
    await a.accept('my password is hunter2');
    await hs.w.h.settle();
    assert.equal(hs.server.requests.length, 0, 'the blocked prompt never reached the model');
    assert.equal(
      a.session.events.some((e) => e.type === 'turn/start'),
      false,
    );
    assert.equal(hs.w.inputs('prompt.log')[0].prompt, 'my password is hunter2');
    assert.equal(hookLine(hs.w.hookRuns(a.session.events)[0]), 'hook UserPromptSubmit blocked: no secrets in prompts');
  });

  it('PostToolUse additionalContext is added to the tool result the model reads', async () => {
    hs.w = await hookWorld(hs.server, { workspace: (t) => one('PostToolUse', 'read_file', hookCommand(t, 'context', 'post.log', 'formatted by the hook')) });
    fs.writeFileSync(path.join(hs.w.workspace, 'notes.txt'), 'hello');
    hs.server.enqueue({ toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'notes.txt' } }] }, { text: 'ok' });
    const a = await hs.w.h.createSession();
    await a.accept('read');
    await hs.w.h.settle();
    assert.match(toolResults(a.session.events)[0].content, /hello[\s\S]*formatted by the hook$/);
    const input = hs.w.inputs('post.log')[0];
    assert.equal((input.tool_response as { is_error: boolean }).is_error, false);
  });

  it('Stop exit 2 makes the turn go on with the reason, and a hook that always blocks is bounded', async () => {
    hs.w = await hookWorld(hs.server, { workspace: (t) => one('Stop', '', hookCommand(t, 'block-once', 'stop.log', 'run the tests too')) });
    hs.server.enqueue({ text: 'first' }, { text: 'second' });
    const a = await hs.w.h.createSession();
    await a.accept('work');
    await hs.w.h.settle();
    assert.equal(a.lastTurn?.stopReason, 'completed');
    assert.equal(hs.server.requests.length, 2);
    assert.match(sentText(1), /run the tests too/);
    const hookMsg = a.session.events.find((e): e is UserMessageEvent => e.type === 'user/message' && e.source.kind === 'hook');
    assert.deepEqual(hookMsg?.source, { kind: 'hook', event: 'Stop' });
    assert.deepEqual(
      hs.w.inputs('stop.log').map((i) => i.stop_hook_active),
      [false, true],
    );
    await hs.w.cleanup();

    hs.server.reset();
    hs.w = await hookWorld(hs.server, { workspace: (t) => one('Stop', '', hookCommand(t, 'block', 'stop2.log', 'never done')) });
    const b = await hs.w.h.createSession();
    await b.accept('work');
    await hs.w.h.settle();
    assert.equal(b.lastTurn?.stopReason, 'completed');
    assert.equal(hs.server.requests.length, 4, 'one answer and at most three continuations');
  });

  it('SubagentStart vetoes a spawn with a clear refusal; nothing is created', async () => {
    hs.w = await hookWorld(hs.server, { workspace: (t) => one('SubagentStart', '', hookCommand(t, 'block', 'start.log', 'no children during the freeze')) });
    hs.server.enqueue({ toolCalls: [{ id: 'c1', name: 'subagent', arguments: { prompt: 'do it', label: 'tests' } }] }, { text: 'ok' });
    const a = await hs.w.h.createSession();
    await a.accept('delegate');
    await hs.w.h.settle();
    const [r] = toolResults(a.session.events);
    assert.equal(r.isError, true);
    assert.match(r.content, /SubagentStart hook refused to start this subagent: no children during the freeze/);
    assert.equal(hs.w.h.store.list().length, 1, 'no child session exists');
    const [input] = hs.w.inputs('start.log');
    assert.equal(input.agent_type, 'tests');
    assert.equal(input.child_depth, 1);
    assert.equal(input.session_id, a.id);
  });

  it('SubagentStop fires in the child with its place in the tree (parent_id, depth, agent)', async () => {
    hs.w = await hookWorld(hs.server, { workspace: (t) => one('SubagentStop', 'tests', hookCommand(t, 'ok', 'stop.log')) });
    hs.server.enqueue(
      { toolCalls: [{ id: 'c1', name: 'subagent', arguments: { prompt: 'do it', label: 'tests' } }] },
      { text: 'child done' },
      { text: 'parent done' },
    );
    const a = await hs.w.h.createSession();
    await a.accept('delegate');
    await hs.w.h.settle();
    const inputs = hs.w.inputs('stop.log');
    assert.equal(inputs.length, 1, 'only the child fires SubagentStop');
    assert.equal(inputs[0].hook_event_name, 'SubagentStop');
    assert.equal(inputs[0].parent_id, a.id);
    assert.equal(inputs[0].depth, 1);
    assert.equal(inputs[0].agent, 'tests');
    assert.equal(inputs[0].last_assistant_message, 'child done');
  });

  it('a hook past its timeout is killed with its whole process group; the run says timeout and the call goes on', async () => {
    hs.w = await hookWorld(hs.server, {});
    const pidFile = path.join(hs.w.tmp, 'grandchild.pid');
    fs.writeFileSync(
      path.join(hs.w.workspace, '.arbor', 'settings.json'),
      JSON.stringify(one('PreToolUse', '*', hookCommand(hs.w.tmp, 'hang', 'hang.log', pidFile), 1)),
    );
    hs.w.h.hookService?.reload();
    fs.writeFileSync(path.join(hs.w.workspace, 'notes.txt'), 'hello');
    hs.server.enqueue({ toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'notes.txt' } }] }, { text: 'ok' });
    const a = await hs.w.h.createSession();
    const t0 = Date.now();
    await a.accept('read');
    await hs.w.h.settle();
    assert.ok(Date.now() - t0 < 10_000);
    const [run] = hs.w.hookRuns(a.session.events);
    assert.equal(run.outcome, 'timeout');
    assert.match(hookLine(run), /hook PreToolUse timed out read_file: it ran past its timeout of 1 s/);
    assert.equal(toolResults(a.session.events)[0].isError, false, 'a timeout is a non-blocking error, as in Claude Code');
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(running(pid), false, 'the grandchild died with the group');
  });

  /**
   * `a` given work whose `event` hook hangs (its grandchild writes `pidFile`): the Stop of its
   * subtree ends at once (not after the hook's 600 s timeout), and the grandchild dies with the
   * hook's group. The model requests made before the Stop.
   */
  async function stopDuringHook(a: Agent, event: string, pidFile: string): Promise<number> {
    await a.accept('work');
    for (let i = 0; i < 400 && !fs.existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 25));
    assert.ok(fs.existsSync(pidFile), `the ${event} hook started`);
    const requests = hs.server.requests.length;
    const ceiling = new Promise((r) => setTimeout(() => r('still waiting'), 15_000));
    const stopped = await Promise.race([hs.w!.h.interruptSubtree(a.id).then(() => 'stopped'), ceiling]);
    assert.equal(stopped, 'stopped', `Stop waited for the ${event} hook (its timeout is 600 s)`);
    await a.idle();
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    for (let i = 0; i < 120 && running(pid); i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(running(pid), false, `the ${event} hook's grandchild died with its group`);
    return requests;
  }

  // Decision 0099: Stop does not wait out a slow hook; the hook's process group is killed.
  for (const event of ['Stop', 'UserPromptSubmit'] as const)
    it(`Stop during a slow ${event} hook ends at once: the hook and its grandchild are killed, nothing runs after`, async () => {
      hs.w = await hookWorld(hs.server, {});
      const pidFile = path.join(hs.w.tmp, 'grandchild.pid');
      fs.writeFileSync(
        path.join(hs.w.workspace, '.arbor', 'settings.json'),
        JSON.stringify(one(event, '', hookCommand(hs.w.tmp, 'hang', 'hang.log', pidFile), 600)),
      );
      hs.w.h.hookService?.reload();
      hs.server.enqueue({ text: 'done' }, { text: 'never asked' });
      const a = await hs.w.h.createSession();
      const requests = await stopDuringHook(a, event, pidFile);
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(hs.server.requests.length, requests, 'no model request after the Stop');
      if (event === 'Stop') assert.equal(a.lastTurn?.stopReason, 'interrupted');
      else {
        assert.equal(
          a.session.events.some((e) => e.type === 'turn/start'),
          false,
          'no turn opened for the unjudged prompt',
        );
        assert.equal(a.inboxSize, 1, 'the prompt stays queued, unjudged, for the user to send again');
      }
    });

  // Decision 0127: every hook a stopped piece of work fired is killed by the Stop, not only the
  // Stop and UserPromptSubmit hooks (0099); a tool hook's run is recorded in the stopped turn's
  // place, not held into the next turn's step.
  const readNotes = { id: 'c1', name: 'read_file', arguments: { path: 'notes.txt' } };
  const cases = [
    ['PreToolUse', readNotes],
    ['PostToolUse', readNotes],
    ['SubagentStart', { id: 'c1', name: 'subagent', arguments: { prompt: 'do it', label: 'tests' } }],
    ['Notification', { id: 'c1', name: 'write_file', arguments: { path: '.vscode/settings.json', content: '{}' } }],
  ] as const;
  for (const [event, call] of cases)
    it(`Stop during a slow ${event} hook kills it and its grandchild; its run is recorded before the next turn`, async () => {
      // The human never answers the ask (Notification's case): only the Stop ends it.
      const approvalPort = {
        ask: (_req: unknown, signal?: AbortSignal) =>
          new Promise<'deny'>((resolve) => signal?.addEventListener('abort', () => resolve('deny'), { once: true })),
      };
      hs.w = await hookWorld(hs.server, {}, { approval: 'ask', approvalPort });
      const pidFile = path.join(hs.w.tmp, 'grandchild.pid');
      fs.writeFileSync(path.join(hs.w.workspace, 'notes.txt'), 'hello');
      fs.writeFileSync(
        path.join(hs.w.workspace, '.arbor', 'settings.json'),
        JSON.stringify(one(event, '', hookCommand(hs.w.tmp, 'hang', 'hang.log', pidFile), 600)),
      );
      hs.w.h.hookService?.reload();
      hs.server.enqueue({ toolCalls: [call] }, { text: 'never asked' });
      const a = await hs.w.h.createSession();
      const requests = await stopDuringHook(a, event, pidFile);
      assert.equal(a.lastTurn?.stopReason, 'interrupted');
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(hs.server.requests.length, requests, 'no model request after the Stop');
      assert.equal(hs.w.h.store.list().length, 1, 'no child was created after the Stop');
      // The next turn (the human sends again): the stopped hook's run is not written inside it.
      hs.server.enqueue({ text: 'next' });
      await a.accept('again');
      await hs.w.h.settle();
      const secondTurn = a.session.events.filter((e) => e.type === 'turn/start')[1].seq;
      const runs = hs.w.hookRuns(a.session.events);
      assert.equal(runs.length, 1, `the stopped ${event} hook's run is recorded once`);
      assert.ok(runs[0].seq < secondTurn, "the stopped hook's run is recorded before the next turn, not inside it");
    });

  it('output is capped; another exit code is a non-blocking error shown in the transcript', async () => {
    hs.w = await hookWorld(hs.server, {
      workspace: (t) => ({
        hooks: {
          PreToolUse: [
            { matcher: 'Read', hooks: [{ type: 'command', command: hookCommand(t, 'big', 'big.log') }] },
            { matcher: 'Grep', hooks: [{ type: 'command', command: hookCommand(t, 'fail', 'fail.log') }] },
          ],
        },
      }),
    });
    hs.server.enqueue(
      {
        toolCalls: [
          { id: 'c1', name: 'read_file', arguments: { path: 'x.txt' } },
          { id: 'c2', name: 'search_files', arguments: { pattern: 'x' } },
        ],
      },
      { text: 'ok' },
    );
    const a = await hs.w.h.createSession();
    await a.accept('go');
    await hs.w.h.settle();
    const runs = hs.w.hookRuns(a.session.events);
    const big = runs.find((r) => r.tool === 'read_file')!;
    assert.equal(big.truncated, true);
    assert.ok((big.reason ?? '').length <= 2000);
    assert.ok(toolResults(a.session.events)[0].content.length < 80 * 1024, 'the block reason the model reads is capped too');
    const failed = runs.find((r) => r.tool === 'search_files')!;
    assert.equal(failed.outcome, 'error');
    assert.equal(hookLine(failed), 'hook PreToolUse failed search_files: it exited with code 3: the hook broke');
    assert.doesNotMatch(toolResults(a.session.events)[1].content, /hook blocked/);
  });

  it("an untrusted workspace's hooks do not run; the user's own do; .claude hooks only behind the setting", async () => {
    hs.w = await hookWorld(hs.server, {
      trusted: false,
      workspace: (t) => one('PreToolUse', '*', hookCommand(t, 'block', 'ws.log')),
      claude: (t) => one('PreToolUse', '*', hookCommand(t, 'block', 'claude.log')),
      user: (t) => one('PreToolUse', '*', hookCommand(t, 'ok', 'user.log')),
    });
    fs.writeFileSync(path.join(hs.w.workspace, 'notes.txt'), 'hello');
    hs.server.enqueue({ toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'notes.txt' } }] }, { text: 'ok' });
    const a = await hs.w.h.createSession();
    await a.accept('read');
    await hs.w.h.settle();
    assert.deepEqual(hs.w.inputs('ws.log'), []);
    assert.deepEqual(hs.w.inputs('claude.log'), []);
    assert.equal(hs.w.inputs('user.log').length, 1);
    assert.equal(toolResults(a.session.events)[0].isError, false);
    assert.equal(hs.w.h.hookService?.hooks.filter((h) => h.source === 'claude').length, 0, 'not read without readClaudeSettings');
    hs.w.h.hookService?.reload({ readClaudeSettings: true });
    assert.equal(hs.w.h.hookService?.hooks.filter((h) => h.source === 'claude').length, 1);
  });

  it('Notification fires when a human is asked to approve; PreCompact before a compaction', async () => {
    const asked: string[] = [];
    hs.w = await hookWorld(
      hs.server,
      {
        workspace: (t) => ({
          hooks: {
            Notification: [{ hooks: [{ type: 'command', command: hookCommand(t, 'ok', 'note.log') }] }],
            PreCompact: [{ matcher: 'manual', hooks: [{ type: 'command', command: hookCommand(t, 'ok', 'compact.log') }] }],
          },
        }),
      },
      {
        approval: 'ask',
        approvalPort: {
          ask: async (req) => {
            asked.push(req.tool);
            return 'deny';
          },
        },
      },
    );
    hs.server.enqueue(
      { toolCalls: [{ id: 'c1', name: 'write_file', arguments: { path: '.vscode/settings.json', content: '{}' } }] },
      { text: 'ok' },
      { text: 'again' },
    );
    const a = await hs.w.h.createSession();
    await a.accept('edit settings');
    await hs.w.h.settle();
    await a.accept('more');
    await hs.w.h.settle();
    assert.deepEqual(asked, ['write_file']);
    await until(() => hs.w!.inputs('note.log').length > 0, 10_000); // the Notification hook is not awaited by the ask
    const [note] = hs.w.inputs('note.log');
    assert.equal(note.notification_type, 'permission_prompt');
    assert.match(String(note.message), /Arbor needs your permission to use write_file/);
    hs.server.enqueue({ text: 'summary' });
    await a.compact(1);
    const [pc] = hs.w.inputs('compact.log');
    assert.equal(pc.trigger, 'manual');
  });

  it('a bad settings file is reported by file and place, and the rest still loads', async () => {
    hs.w = await hookWorld(hs.server, {});
    fs.writeFileSync(
      path.join(hs.w.workspace, '.arbor', 'settings.json'),
      JSON.stringify({
        hooks: {
          PreToolUse: [
            { matcher: '(', hooks: [] },
            { matcher: 'Bash', hooks: [{ type: 'command', command: 'true' }] },
          ],
          Nope: [],
        },
      }),
    );
    const problems = hs.w.h.hookService?.reload() ?? [];
    assert.equal(problems.length, 2);
    assert.match(problems[0], /settings\.json: hooks\.PreToolUse\[0\]\.matcher "\(" is not a valid regular expression/);
    assert.match(problems[1], /Arbor does not fire "Nope"/);
    assert.equal(hs.w.h.hookService?.hooks.length, 1);
  });
});
