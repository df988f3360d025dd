import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as acp from '@agentclientprotocol/sdk/unstable';
import {
  ACP_AGENTS,
  ACP_BUNDLED,
  type AcpAgentName,
  agentHome,
  agentLaunch,
  claudeBash,
  claudeWrite,
  codexAddFile,
  codexExec,
  installedVersion,
  SANDBOX_MODE_IDS,
  scriptAgents,
  stalled,
  turnRequests,
  workspaceOf,
} from '../support/acp-agents';
import {
  type AgentPeer,
  agentText,
  choose,
  eventually,
  groupProcesses,
  killGroup,
  processesMatching,
  processesUnder,
  startAgent,
  toolCallUpdates,
  updateKinds,
} from '../support/acp-client';
import { ModelServer } from '../support/model-server';

// The three real ACP agents the `acp` provider runs (issue 14), driven by a bare SDK 2.4
// client (no Arbor code) against the loopback model server: the ground truth the provider's
// mode table and permission mapping stand on (docs/acp-agents-facts.md).

const optionKinds = (req: acp.RequestPermissionRequest) => req.options.map((o) => `${o.optionId}:${o.kind}`);
/** A command that runs for 30 s, findable by its marker (an unused argument). */
const longCommand = (marker: string) => `node -e "setTimeout(()=>{},30000)" ${marker} && echo late > late.txt`;

describe('remote: real ACP agents through a bare SDK client (offline)', function () {
  this.timeout(60_000);
  let server: ModelServer;
  let home = '';
  let cwd = '';
  let peer: AgentPeer | undefined;

  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(() => server.reset());
  afterEach(async () => {
    if (peer) {
      await peer.close(3000);
      killGroup(peer.pgid);
    }
    // Only what works in this test's own home (a Bash command Claude started in a session of its own).
    if (home) for (const p of processesUnder(home)) process.kill(p.pid, 'SIGKILL');
    if (home) fs.rmSync(home, { recursive: true, force: true });
    peer = undefined;
    home = '';
  });

  /** Starts `name` in a fresh home, opens a session in its workspace, and sets `mode` if given. */
  async function open(name: AcpAgentName, mode?: string): Promise<{ p: AgentPeer; session: acp.NewSessionResponse; sid: string }> {
    home = agentHome(`acp-${name}`);
    cwd = workspaceOf(home);
    const p = await startAgent(agentLaunch(name, server, home), cwd);
    peer = p;
    const session = await p.newSession(cwd);
    if (mode) await p.setMode(session.sessionId, mode);
    return { p, session, sid: session.sessionId };
  }

  /** After a cancel: stdin EOF ends the agent by itself, and nothing it started is left. */
  async function assertNothingLeft(p: AgentPeer, marker?: string): Promise<void> {
    const exit = await p.close(8000);
    assert.equal(exit.killed, false, `the agent exits on stdin EOF by itself; stderr tail:\n${p.stderr().slice(-1500)}`);
    assert.equal(exit.code, 0);
    assert.ok(await eventually(() => groupProcesses(p.pgid).length === 0, 5000), `its group is gone: ${groupProcesses(p.pgid).join('\n')}`);
    assert.ok(await eventually(() => processesUnder(home).length === 0, 5000), `nothing works in its home: ${processesUnder(home).map((x) => x.line)}`);
    if (marker) assert.deepEqual(processesMatching(marker), [], 'the long command is gone');
  }

  it('the pinned agents are installed (package.json, --version, initialize)', () => {
    for (const a of Object.values(ACP_AGENTS)) assert.equal(installedVersion(a.pkg), a.version, a.pkg);
    for (const [pkg, v] of Object.entries(ACP_BUNDLED)) assert.equal(installedVersion(pkg), v, pkg);
    assert.equal(execFileSync(process.execPath, [ACP_AGENTS.claude.entry, '--version'], { encoding: 'utf8' }).trim(), ACP_AGENTS.claude.version);
    assert.equal(
      execFileSync(process.execPath, [ACP_AGENTS.codex.entry, '--version'], { encoding: 'utf8' }).trim(),
      `${ACP_AGENTS.codex.pkg} ${ACP_AGENTS.codex.version}`,
    );
  });

  describe('SDK 1.9.0 example agent (scripted, no model)', () => {
    it('streams text and a read call, asks permission for its edit; reject_once: the edit call never completes, end_turn', async () => {
      const { p, session, sid } = await open('example');
      assert.equal(p.init.protocolVersion, 1);
      assert.equal(p.init.agentInfo, undefined, 'it names itself nowhere');
      assert.deepEqual(Object.keys(session), ['sessionId'], 'no modes, no models');
      const res = await p.prompt(sid, 'Do something');
      assert.deepEqual(res, { stopReason: 'end_turn' }, 'no usage');
      assert.deepEqual(updateKinds(p.updates, sid), [
        'agent_message_chunk',
        'tool_call:pending',
        'tool_call_update:completed',
        'agent_message_chunk',
        'tool_call:pending',
        'agent_message_chunk',
      ]);
      assert.equal(p.permissions.length, 1);
      assert.deepEqual(optionKinds(p.permissions[0]), ['allow:allow_once', 'reject:reject_once']);
      assert.equal(p.permissions[0].toolCall.toolCallId, 'call_2');
      assert.equal(p.permissions[0].toolCall.kind, 'edit');
      assert.match(agentText(p.updates, sid), /I'll skip the configuration update\.$/);
      assert.deepEqual(fs.readdirSync(cwd), [], 'it touches no file');
    });

    it('allow_once: the edit call completes (rawOutput only, no content)', async () => {
      const { p, sid } = await open('example');
      p.answer = choose('allow_once');
      assert.equal((await p.prompt(sid, 'Do something')).stopReason, 'end_turn');
      const edit = toolCallUpdates(p.updates, 'call_2');
      assert.deepEqual(
        edit.map((u) => u.sessionUpdate + (u.status ? `:${u.status}` : '')),
        ['tool_call:pending', 'tool_call_update:completed'],
      );
      assert.deepEqual((edit[1] as acp.ToolCallUpdate).rawOutput, { success: true, message: 'Configuration updated' });
      assert.match(agentText(p.updates, sid), /successfully updated the configuration/);
    });

    it('cancel mid-turn: stopReason cancelled at its next step (≤ 1 s), exit on stdin EOF, nothing left', async () => {
      const { p, sid } = await open('example');
      const turn = p.prompt(sid, 'Do something');
      assert.ok(await eventually(() => p.updates.length >= 1, 5000));
      const t0 = Date.now();
      await p.cancel(sid);
      assert.deepEqual(await turn, { stopReason: 'cancelled' });
      assert.ok(Date.now() - t0 < 1500, 'within its 1 s step');
      await assertNothingLeft(p);
    });

    it('a permission request answered `cancelled` (as after session/cancel) ends the turn end_turn, not cancelled', async () => {
      const { p, sid } = await open('example');
      p.answer = () => ({ outcome: { outcome: 'cancelled' } });
      assert.deepEqual(await p.prompt(sid, 'Do something'), { stopReason: 'end_turn' });
      assert.equal(updateKinds(p.updates, sid).pop(), 'tool_call:pending', 'nothing after the edit call');
    });
  });

  describe(`claude-agent-acp ${ACP_AGENTS.claude.version} (Claude Code 2.1.318, Anthropic Messages)`, () => {
    it('no authenticate; offers its modes; a plain answer streams and ends end_turn with usage', async () => {
      scriptAgents(server, { messages: [{ text: 'Hello from claude' }] });
      const { p, session, sid } = await open('claude', SANDBOX_MODE_IDS.claude['read-only']);
      assert.deepEqual(p.init.authMethods, []);
      assert.deepEqual(p.init.agentInfo, { name: ACP_AGENTS.claude.pkg, title: 'Claude Agent', version: ACP_AGENTS.claude.version });
      assert.deepEqual(
        p.extNotifications.map((n) => [n.method, (n.params as { authStatus?: { kind?: string } }).authStatus?.kind]),
        [['_auth/status_update', 'api_key']],
      );
      assert.equal(session.modes?.currentModeId, 'auto', 'its own default: a classifier model call decides');
      assert.deepEqual(
        session.modes?.availableModes.map((m) => `${m.id}=${m.name}`),
        ['default=Manual', 'acceptEdits=Accept edits', 'plan=Plan', 'auto=Auto', 'bypassPermissions=Bypass permissions'],
      );
      const res = await p.prompt(sid, 'Say hello');
      assert.equal(res.stopReason, 'end_turn');
      assert.equal(agentText(p.updates, sid), 'Hello from claude');
      const u = res.usage!;
      assert.ok(u.inputTokens > 0 && u.outputTokens > 0);
      assert.equal(u.totalTokens, u.inputTokens + u.outputTokens + (u.cachedReadTokens ?? 0) + (u.cachedWriteTokens ?? 0));
      const kinds = updateKinds(p.updates, sid);
      for (const k of ['config_option_update', 'available_commands_update', 'usage_update', 'agent_message_chunk']) assert.ok(kinds.includes(k), k);
      const turns = turnRequests(server, 'messages');
      assert.equal(turns.length, 1);
      assert.equal(turns[0].url, '/v1/messages?beta=true');
    });

    it('read-only (default mode): Bash asks permission; reject_once → failed update, no file, the turn goes on', async () => {
      scriptAgents(server, { messages: [claudeBash('echo hi > made-by-claude.txt'), { text: 'understood' }] });
      const { p, sid } = await open('claude', SANDBOX_MODE_IDS.claude['read-only']);
      const res = await p.prompt(sid, 'Make a file please');
      assert.equal(res.stopReason, 'end_turn');
      assert.equal(p.permissions.length, 1);
      const req = p.permissions[0];
      assert.deepEqual(optionKinds(req), ['allow-once:allow_once', 'allow-with-updates:allow_always', 'reject:reject_once']);
      assert.equal(req.toolCall.kind, 'execute');
      assert.deepEqual(req.toolCall.rawInput, { command: 'echo hi > made-by-claude.txt', description: 'run a command' });
      const call = toolCallUpdates(p.updates, req.toolCall.toolCallId);
      assert.deepEqual((call[0] as acp.ToolCall).rawInput, {}, 'the tool_call comes before its input; updates without a status carry it');
      const last = call[call.length - 1] as acp.ToolCallUpdate;
      assert.equal(last.status, 'failed');
      assert.equal(last.rawOutput, 'User refused permission to run tool');
      assert.equal(fs.existsSync(path.join(cwd, 'made-by-claude.txt')), false);
      assert.equal(agentText(p.updates, sid), 'understood');
    });

    it('read-only (default mode): Write asks permission; allow_once → completed update, the file written', async () => {
      scriptAgents(server, { messages: [claudeWrite('w.txt', 'hello\n'), { text: 'written' }] });
      const { p, sid } = await open('claude', SANDBOX_MODE_IDS.claude['read-only']);
      p.answer = choose('allow_once');
      assert.equal((await p.prompt(sid, 'Write the file please')).stopReason, 'end_turn');
      const req = p.permissions[0];
      assert.deepEqual(optionKinds(req), ['allow-once:allow_once', 'allow-with-updates:allow_always', 'reject:reject_once']);
      assert.equal(req.toolCall.kind, 'edit');
      assert.equal(req.toolCall.title, 'Write w.txt');
      const last = toolCallUpdates(p.updates, req.toolCall.toolCallId).pop() as acp.ToolCallUpdate;
      assert.equal(last.status, 'completed');
      assert.match(String(last.rawOutput), /^File created successfully at: w\.txt/);
      assert.equal(fs.readFileSync(path.join(cwd, 'w.txt'), 'utf8'), 'hello\n');
    });

    it('workspace-write (acceptEdits): Bash writes in the workspace without asking', async () => {
      scriptAgents(server, { messages: [claudeBash('echo hi > made.txt'), { text: 'done' }] });
      const { p, sid } = await open('claude', SANDBOX_MODE_IDS.claude['workspace-write']);
      assert.equal((await p.prompt(sid, 'Make a file please')).stopReason, 'end_turn');
      assert.deepEqual(p.permissions, []);
      assert.equal(fs.readFileSync(path.join(cwd, 'made.txt'), 'utf8'), 'hi\n');
      assert.ok(updateKinds(p.updates, sid).includes('tool_call_update:completed'));
    });

    it('full-access (bypassPermissions): writes outside the workspace without asking', async () => {
      scriptAgents(server, { messages: [claudeBash('echo out > ../outside.txt'), { text: 'done' }] });
      const { p, sid } = await open('claude', SANDBOX_MODE_IDS.claude['full-access']);
      assert.equal((await p.prompt(sid, 'Make a file please')).stopReason, 'end_turn');
      assert.deepEqual(p.permissions, []);
      assert.equal(fs.readFileSync(path.join(home, 'outside.txt'), 'utf8'), 'out\n');
    });

    it('cancel mid-stream: cancelled at once with zero usage; the session goes on', async () => {
      scriptAgents(server, { messages: [stalled(), { text: 'after cancel' }] });
      const { p, sid } = await open('claude', SANDBOX_MODE_IDS.claude['read-only']);
      const turn = p.prompt(sid, 'Tell a long story');
      assert.ok(await eventually(() => agentText(p.updates, sid).length > 0, 15_000), 'text streamed');
      await p.cancel(sid);
      const res = await turn;
      assert.equal(res.stopReason, 'cancelled');
      assert.deepEqual(res.usage, { inputTokens: 0, outputTokens: 0, cachedReadTokens: 0, cachedWriteTokens: 0, totalTokens: 0 });
      assert.ok(await eventually(() => server.inFlight === 0, 3000), 'the held model stream is dropped');
      assert.equal((await p.prompt(sid, 'Go on please')).stopReason, 'end_turn');
      assert.match(agentText(p.updates, sid), /after cancel$/);
    });

    it('cancel mid-command: the command (in a process session of its own) is killed; nothing left after stdin EOF', async () => {
      const marker = 'arbor-acp-long-claude';
      scriptAgents(server, { messages: [claudeBash(longCommand(marker)), { text: 'done' }] });
      const { p, sid } = await open('claude', SANDBOX_MODE_IDS.claude['full-access']);
      const turn = p.prompt(sid, 'Run the long command');
      assert.ok(await eventually(() => processesMatching(marker).length > 0, 15_000), 'the command runs');
      await p.cancel(sid);
      const res = await turn;
      assert.equal(res.stopReason, 'cancelled');
      const calls = toolCallUpdates(p.updates).filter((u) => u.sessionUpdate === 'tool_call_update' && u.status === 'failed');
      assert.equal(calls.length, 1, 'the running call ends failed');
      assert.ok(await eventually(() => processesMatching(marker).length === 0, 5000), 'the command is killed on cancel');
      await assertNothingLeft(p, marker);
      assert.equal(fs.existsSync(path.join(cwd, 'late.txt')), false);
    });
  });

  describe(`codex-acp ${ACP_AGENTS.codex.version} (codex app-server 0.166.0, OpenAI Responses)`, () => {
    it('no authenticate; offers its modes; a plain answer streams and ends end_turn with usage', async () => {
      scriptAgents(server, { responses: [{ text: 'Hello from codex' }] });
      const { p, session, sid } = await open('codex', SANDBOX_MODE_IDS.codex['workspace-write']);
      assert.deepEqual(
        p.init.authMethods?.map((m) => m.id),
        ['api-key', 'chat-gpt'],
        'offered, but not needed',
      );
      assert.deepEqual(p.init.agentInfo, { name: ACP_AGENTS.codex.pkg, title: 'Codex', version: ACP_AGENTS.codex.version });
      assert.deepEqual(
        p.extNotifications.map((n) => [n.method, (n.params as { authStatus?: { kind?: string } }).authStatus?.kind]),
        [['_auth/status_update', 'gateway']],
      );
      assert.equal(session.modes?.currentModeId, 'agent', 'its own default: a model reviews approvals');
      assert.deepEqual(
        session.modes?.availableModes.map((m) => `${m.id}=${m.name}`),
        ['read-only=Read-only', 'workspace-write=Workspace access', 'agent=Auto review', 'agent-full-access=Full access'],
      );
      const res = await p.prompt(sid, 'Say hello');
      assert.equal(res.stopReason, 'end_turn');
      assert.equal(agentText(p.updates, sid), 'Hello from codex');
      const u = res.usage!;
      assert.ok(u.inputTokens > 0 && u.outputTokens > 0);
      assert.equal(u.totalTokens, u.inputTokens + u.outputTokens + (u.cachedReadTokens ?? 0));
      const turns = turnRequests(server, 'responses');
      assert.deepEqual(
        turns.map((r) => r.url),
        ['/v1/responses'],
      );
    });

    it('read-only: an escalated command asks permission; reject_once (`cancel`) ends the whole turn cancelled, no file', async () => {
      scriptAgents(server, { responses: [codexExec('sleep 0.3; echo hi > made-by-codex.txt', 'Write the file?'), { text: 'never asked' }] });
      const { p, sid } = await open('codex', SANDBOX_MODE_IDS.codex['read-only']);
      const res = await p.prompt(sid, 'Make a file please');
      assert.equal(res.stopReason, 'cancelled', 'its only reject_once option aborts the turn');
      const req = p.permissions[0];
      assert.deepEqual(optionKinds(req), ['allow_once:allow_once', 'accept_execpolicy_amendment:allow_always', 'cancel:reject_once']);
      assert.equal(req.toolCall.kind, 'execute');
      assert.equal((req.toolCall.rawInput as { command?: string }).command, 'sleep 0.3; echo hi > made-by-codex.txt');
      assert.deepEqual(
        toolCallUpdates(p.updates, req.toolCall.toolCallId).map((u) => u.status),
        ['in_progress', 'failed'],
      );
      assert.equal(fs.existsSync(path.join(cwd, 'made-by-codex.txt')), false);
      assert.equal(turnRequests(server, 'responses').length, 1, 'the model is not asked again');
    });

    it('read-only: allow_once runs the escalated command outside the sandbox; completed with exit code 0 in _meta', async () => {
      scriptAgents(server, { responses: [codexExec('sleep 0.3; echo hi > made-by-codex.txt', 'Write the file?'), { text: 'done' }] });
      const { p, sid } = await open('codex', SANDBOX_MODE_IDS.codex['read-only']);
      p.answer = choose('allow_once');
      assert.equal((await p.prompt(sid, 'Make a file please')).stopReason, 'end_turn');
      const last = toolCallUpdates(p.updates, p.permissions[0].toolCall.toolCallId).pop() as acp.ToolCallUpdate;
      assert.equal(last.status, 'completed');
      assert.equal((last._meta as { terminal_exit?: { exit_code?: number } }).terminal_exit?.exit_code, 0);
      assert.equal(fs.readFileSync(path.join(cwd, 'made-by-codex.txt'), 'utf8'), 'hi\n');
    });

    it('read-only: a plain write is refused by the sandbox without asking; the output is in _meta.terminal_output_delta', async () => {
      scriptAgents(server, { responses: [codexExec('sleep 0.3; echo hi > x.txt'), { text: 'could not' }] });
      const { p, sid } = await open('codex', SANDBOX_MODE_IDS.codex['read-only']);
      assert.equal((await p.prompt(sid, 'Make a file please')).stopReason, 'end_turn');
      assert.deepEqual(p.permissions, []);
      const call = toolCallUpdates(p.updates, 'call_0_0');
      assert.equal(call[0].sessionUpdate, 'tool_call');
      assert.equal(call[call.length - 1].status, 'failed');
      const out = call.map((u) => (u._meta as { terminal_output_delta?: { data?: string } } | undefined)?.terminal_output_delta?.data ?? '').join('');
      assert.match(out, /Read-only file system/);
      assert.equal(fs.existsSync(path.join(cwd, 'x.txt')), false);
    });

    it('read-only: apply_patch asks permission; reject_once ends the turn cancelled (no file), allow_once writes it', async () => {
      scriptAgents(server, { responses: [codexAddFile('patched.txt', 'from patch\n'), codexAddFile('patched.txt', 'from patch\n'), { text: 'patched' }] });
      const { p, sid } = await open('codex', SANDBOX_MODE_IDS.codex['read-only']);
      assert.equal((await p.prompt(sid, 'Patch a file please')).stopReason, 'cancelled');
      assert.deepEqual(optionKinds(p.permissions[0]), ['allow_once:allow_once', 'allow_for_session:allow_always', 'cancel:reject_once']);
      assert.equal(p.permissions[0].toolCall.kind, 'edit');
      assert.deepEqual(
        toolCallUpdates(p.updates, 'call_patch_1').map((u) => u.status),
        ['in_progress'],
        'a rejected patch never completes',
      );
      assert.equal(fs.existsSync(path.join(cwd, 'patched.txt')), false);
      p.answer = choose('allow_once');
      assert.equal((await p.prompt(sid, 'Patch it again please')).stopReason, 'end_turn');
      assert.equal(fs.readFileSync(path.join(cwd, 'patched.txt'), 'utf8'), 'from patch\n');
    });

    it('workspace-write: a command writes in the workspace without asking; full access (agent-full-access) outside it', async () => {
      scriptAgents(server, {
        responses: [
          codexExec('sleep 0.3; echo hi > made.txt; echo out'),
          { text: 'done' },
          codexExec('sleep 0.3; echo out > ../outside.txt'),
          { text: 'done' },
        ],
      });
      const { p, sid } = await open('codex', SANDBOX_MODE_IDS.codex['workspace-write']);
      assert.equal((await p.prompt(sid, 'Make a file please')).stopReason, 'end_turn');
      assert.equal(fs.readFileSync(path.join(cwd, 'made.txt'), 'utf8'), 'hi\n');
      await p.setMode(sid, SANDBOX_MODE_IDS.codex['full-access']);
      assert.equal((await p.prompt(sid, 'Now outside please')).stopReason, 'end_turn');
      assert.deepEqual(p.permissions, []);
      assert.equal(fs.readFileSync(path.join(home, 'outside.txt'), 'utf8'), 'out\n');
    });

    it('cancel mid-stream: cancelled with usage null', async () => {
      scriptAgents(server, { responses: [stalled()] });
      const { p, sid } = await open('codex', SANDBOX_MODE_IDS.codex['workspace-write']);
      const turn = p.prompt(sid, 'Tell a long story');
      assert.ok(await eventually(() => agentText(p.updates, sid).length > 0, 15_000), 'text streamed');
      await p.cancel(sid);
      const res = await turn;
      assert.equal(res.stopReason, 'cancelled');
      assert.equal(res.usage, null);
      assert.ok(await eventually(() => server.inFlight === 0, 3000), 'the held model stream is dropped');
    });

    it('cancel mid-command: cancelled, but the command keeps running (its call never completes) until the agent exits on stdin EOF', async () => {
      const marker = 'arbor-acp-long-codex';
      scriptAgents(server, { responses: [codexExec(longCommand(marker)), { text: 'done' }] });
      const { p, sid } = await open('codex', SANDBOX_MODE_IDS.codex['workspace-write']);
      const turn = p.prompt(sid, 'Run the long command');
      assert.ok(await eventually(() => processesMatching(marker).length > 0, 15_000), 'the command runs');
      // Its tool_call comes ~0.1 s after the command starts (one that ends sooner is never reported).
      assert.ok(await eventually(() => toolCallUpdates(p.updates, 'call_0_0').length > 0, 5000), 'its tool_call came');
      await p.cancel(sid);
      assert.equal((await turn).stopReason, 'cancelled');
      await new Promise((r) => setTimeout(r, 1000));
      assert.ok(processesMatching(marker).length > 0, 'a cancel leaves the command running (Codex keeps its exec sessions)');
      assert.deepEqual(
        toolCallUpdates(p.updates, 'call_0_0').map((u) => u.status),
        ['in_progress'],
      );
      // The sandbox (bubblewrap --die-with-parent) goes with the app server.
      await assertNothingLeft(p, marker);
      assert.equal(fs.existsSync(path.join(cwd, 'late.txt')), false);
      // An interrupted sandboxed command leaves its empty mount points behind in the workspace.
      assert.deepEqual(fs.readdirSync(cwd).sort(), ['.agents', '.aws', '.codex', '.git']);
    });
  });
});
