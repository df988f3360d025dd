import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { HarnessConfig } from '../../src/core/harness';
import type { ApprovalDecision } from '../../src/core/policy/approval';
import type { AcpAgentSettings } from '../../src/core/remote/settings';
import type { SandboxMode } from '../../src/core/session/events';
import { waitFor } from '../core/subagent/helpers';
import {
  ACP_AGENTS,
  type AcpAgentName,
  agentHome,
  agentLaunch,
  claudeBash,
  claudeWrite,
  codexExec,
  SANDBOX_MODE_IDS,
  scriptAgents,
  stalled,
  turnRequests,
} from '../support/acp-agents';
import type { TestHarness } from '../support/harness';
import { type ScriptedApproval, scriptedApproval } from '../support/scripted-approval';
import { assertValidTurn, groupAlive, ofType, remoteWorld } from './world';

// The acp provider (issue 14.1, 14.2) against the real ACP adapters of Claude Code and Codex,
// pinned in .tools/acp-agents, each pointed at the test model server (Anthropic Messages and
// OpenAI Responses SSE): what they stream and run lands in the child's log, the sandbox reaches
// them as their own modes, and what they ask permission for is refused or asked of the human.

describe('remote: acp provider vs claude-agent-acp and codex-acp (real adapters, offline)', function () {
  this.timeout(120_000);
  const w = remoteWorld();
  let home = '';
  let port: ScriptedApproval;
  afterEach(() => {
    if (home) fs.rmSync(home, { recursive: true, force: true });
    home = '';
  });

  function settings(name: 'claude' | 'codex'): AcpAgentSettings {
    home = agentHome(`prov-${name}`);
    const launch = agentLaunch(name as AcpAgentName, w.server, home);
    return { name, command: launch.command, args: launch.args, env: launch.env, modes: SANDBOX_MODE_IDS[name], graceMs: 1500 };
  }

  /** One child of the agent, run to its end through `subagents.start`. */
  async function child(
    name: 'claude' | 'codex',
    sandbox: SandboxMode,
    o: Partial<HarnessConfig> = {},
    during?: (id: string, h: TestHarness['h']) => Promise<void>,
  ) {
    const t = await w.reopen({ remote: { acp: [settings(name)] }, sandbox, ...o });
    const root = await t.h.createSession();
    const run = await t.h.subagents.start(root, `acp:${name}`, { prompt: 'Do the task' });
    if (during) await during(run.id, t.h);
    const r = await run.result;
    await run.dispose();
    const events = (await t.h.store.inspect(run.id)).events;
    return { t, r, events, id: run.id, root };
  }
  const text = (events: Parameters<typeof ofType>[0]) =>
    ofType(events, 'assistant/message')
      .map((m) => m.text)
      .join('');

  describe('claude-agent-acp', () => {
    it('a plain answer: its text, the adapter and version recorded, usage with cache tokens, its group gone', async () => {
      scriptAgents(w.server, { messages: [{ text: 'Hello from claude over ACP' }] });
      const { events, r } = await child('claude', 'read-only');
      assert.equal(r.stopReason, 'completed');
      assert.equal(text(events), 'Hello from claude over ACP');
      const remote = ofType(events, 'subagent/remote')[0];
      assert.equal(remote.program, 'acp:claude');
      assert.equal(remote.version, `${ACP_AGENTS.claude.pkg} ${ACP_AGENTS.claude.version}`);
      assert.equal(groupAlive(remote.pgid!), false);
      const usage = ofType(events, 'assistant/message').pop()!.usage!;
      const served = turnRequests(w.server, 'messages')[0];
      assert.equal(usage.promptTokens, served.promptTokens, 'input plus cache reads and writes');
      assert.ok(usage.completionTokens > 0);
      assertValidTurn(events);
    });

    it('read-only under never: its Bash asks, is refused (reject_once), nothing written; the call has its real input', async () => {
      scriptAgents(w.server, { messages: [claudeBash('echo hi > made-by-claude.txt'), { text: 'understood, not writing' }] });
      const { events, t } = await child('claude', 'read-only');
      const calls = ofType(events, 'assistant/message').flatMap((m) => m.toolCalls ?? []);
      assert.equal(calls.length, 1);
      assert.equal(calls[0].name, 'acp:execute');
      assert.equal(JSON.parse(calls[0].arguments).command, 'echo hi > made-by-claude.txt', 'the input sent after the call is merged in');
      const result = ofType(events, 'tool/result')[0];
      assert.equal(result.isError, true);
      assert.match(result.content, /refused/i);
      assert.equal(fs.existsSync(path.join(t.workspace, 'made-by-claude.txt')), false);
      assert.match(text(events), /understood, not writing/);
    });

    it('under escalate: its Bash that writes is put to the human with the lineage, allowed once, and runs', async () => {
      port = scriptedApproval(() => 'allow' as ApprovalDecision);
      scriptAgents(w.server, { messages: [claudeBash('echo allowed-by-a-human > asked.txt'), { text: 'ran it' }] });
      const { events, id, root, t } = await child('claude', 'read-only', {
        approval: 'ask',
        approvalPort: port,
        childApproval: 'escalate',
        escalateTimeoutMs: 30_000,
      });
      assert.equal(port.requests.length, 1, JSON.stringify(ofType(events, 'tool/result')));
      assert.deepEqual(port.requests[0].lineage, [id, root.id]);
      assert.equal(port.requests[0].tool, 'acp:execute');
      // As for Arbor's own read-only agents, a command the human approves may write (the human decided); an edit may not (below).
      assert.equal(fs.readFileSync(path.join(t.workspace, 'asked.txt'), 'utf8'), 'allowed-by-a-human\n');
      assert.equal(ofType(events, 'tool/result')[0].isError, false);
    });

    it('under escalate in a read-only child: its edit is refused without asking (no answer may allow it), nothing written', async () => {
      port = scriptedApproval(() => 'allow' as ApprovalDecision);
      scriptAgents(w.server, { messages: [claudeWrite('note.txt', 'never written\n'), { text: 'could not write' }] });
      const { events, t } = await child('claude', 'read-only', { approval: 'ask', approvalPort: port, childApproval: 'escalate', escalateTimeoutMs: 30_000 });
      assert.equal(port.requests.length, 0, 'the human was not asked');
      assert.equal(fs.existsSync(path.join(t.workspace, 'note.txt')), false);
      assert.equal(ofType(events, 'tool/result')[0].isError, true);
    });
  });

  describe('codex-acp', () => {
    it('workspace-write: a command runs in its sandbox; the result holds its output and exit code', async () => {
      scriptAgents(w.server, { responses: [codexExec('sleep 0.3; echo hi > made-by-codex.txt; echo wrote-it'), { text: 'done' }] });
      const { events, t, r } = await child('codex', 'workspace-write');
      assert.equal(r.stopReason, 'completed');
      const remote = ofType(events, 'subagent/remote')[0];
      assert.equal(remote.version, `${ACP_AGENTS.codex.pkg} ${ACP_AGENTS.codex.version}`);
      const result = ofType(events, 'tool/result')[0];
      assert.equal(result.name, 'acp:execute');
      assert.match(result.content, /wrote-it/);
      assert.match(result.content, /\(exit code 0\)/);
      assert.equal(fs.readFileSync(path.join(t.workspace, 'made-by-codex.txt'), 'utf8'), 'hi\n');
      assert.equal(text(events), 'done');
      assertValidTurn(events);
    });

    it('read-only under never: an escalated command is refused; codex ends its turn, which reads as the refusal (error), no file', async () => {
      scriptAgents(w.server, { responses: [codexExec('sleep 0.3; echo hi > made-by-codex.txt', 'Write the file?'), { text: 'never asked' }] });
      const { events, t } = await child('codex', 'read-only');
      const end = ofType(events, 'turn/end')[0];
      assert.equal(end.stopReason, 'error');
      assert.match(end.error!, /stopped its turn after Arbor refused what it asked permission for/);
      assert.equal(fs.existsSync(path.join(t.workspace, 'made-by-codex.txt')), false);
      assertValidTurn(events);
    });

    it('cancel mid-stream: session/cancel, interrupted, the streamed text kept, its group gone', async () => {
      scriptAgents(w.server, { responses: [stalled('The beginning of a long answer')] });
      const { events, r } = await child('codex', 'workspace-write', {}, async (id, h) => {
        await waitFor(() => turnRequests(w.server, 'responses').length > 0, 'the model request', 60_000);
        await new Promise((res) => setTimeout(res, 2500)); // its first chunks streamed
        await h.interruptSubtree(id);
      });
      assert.equal(r.stopReason, 'interrupted');
      assert.equal(text(events), 'The beginning of', 'the two chunks that streamed before the hold');
      assert.equal(ofType(events, 'turn/end')[0].stopReason, 'interrupted');
      assert.equal(groupAlive(ofType(events, 'subagent/remote')[0].pgid!), false);
    });
  });
});
