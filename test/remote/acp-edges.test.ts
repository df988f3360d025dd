import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { HarnessConfig } from '../../src/core/harness';
import type { ApprovalDecision } from '../../src/core/policy/approval';
import type { AcpAgentSettings } from '../../src/core/remote/settings';
import { UNANSWERED } from '../../src/core/remote/sink';
import type { SessionEvent } from '../../src/core/session/events';
import { waitFor } from '../core/subagent/helpers';
import type { TestHarness } from '../support/harness';
import { type ScriptedApproval, scriptedApproval } from '../support/scripted-approval';
import { assertValidTurn, groupAlive, ofType, remoteWorld } from './world';

// The acp provider against a scripted ACP agent (test/support/acp-fixture-agent.ts, the real
// SDK on both ends) that misbehaves one way per scenario: the bad input of issue 14.
const FIXTURE = path.join(__dirname, '..', 'support', 'acp-fixture-agent.js');

describe('remote: acp provider — edges and bad input (a scripted ACP agent)', function () {
  this.timeout(60_000);
  const w = remoteWorld();
  let logFile: string;
  let port: ScriptedApproval;
  beforeEach(() => {
    logFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-fix-')), 'log.jsonl');
  });
  afterEach(() => fs.rmSync(path.dirname(logFile), { recursive: true, force: true }));
  const agentLog = (): Record<string, unknown>[] =>
    fs.existsSync(logFile)
      ? fs
          .readFileSync(logFile, 'utf8')
          .trim()
          .split('\n')
          .flatMap((l) => {
            try {
              return [JSON.parse(l)];
            } catch {
              return []; // a line still being written
            }
          })
      : [];
  const fixture = (scenario: string, extra: Partial<AcpAgentSettings> = {}): AcpAgentSettings => ({
    name: 'fix',
    command: process.execPath,
    args: [FIXTURE],
    env: { ACP_SCENARIO: scenario, ACP_LOG: logFile },
    graceMs: 800,
    ...extra,
  });

  /** One child run through the provider to its end: its log, how it ended, the agent's pgid. */
  async function runChild(
    scenario: string,
    o: Partial<HarnessConfig> = {},
    extra: Partial<AcpAgentSettings> = {},
    during?: (id: string, h: TestHarness['h']) => Promise<void>,
  ) {
    const t = await w.reopen({ remote: { acp: [fixture(scenario, extra)] }, ...o });
    const root = await t.h.createSession();
    const run = await t.h.subagents.start(root, 'acp:fix', { prompt: 'do the task' });
    if (during) await during(run.id, t.h);
    const r = await run.result;
    await run.dispose();
    const events = (await t.h.store.inspect(run.id)).events;
    const pgid = ofType(events, 'subagent/remote')[0]?.pgid;
    return { t, r, events, pgid, id: run.id };
  }
  const ending = (events: readonly SessionEvent[]) => ofType(events, 'turn/end')[0];

  it('a plain answer: chunks joined into one message, usage mapped, identity recorded, cwd absolute, no fs/terminal capability advertised', async () => {
    const { events, pgid, t } = await runChild('plain');
    const msgs = ofType(events, 'assistant/message');
    assert.equal(msgs.map((m) => m.text).join(''), 'Hello from the fixture');
    assert.deepEqual(msgs[msgs.length - 1].usage, { promptTokens: 140, completionTokens: 7, cacheHitTokens: 40 });
    const remote = ofType(events, 'subagent/remote')[0];
    assert.equal(remote.program, 'acp:fix');
    assert.equal(remote.version, 'arbor-fixture 9.9.9');
    assert.equal(remote.externalId, 'fixture-session-1');
    assert.equal(groupAlive(pgid!), false);
    const [init, created] = agentLog();
    assert.deepEqual((init.clientCapabilities as { fs: unknown; terminal: unknown }).fs, { readTextFile: false, writeTextFile: false });
    assert.equal((init.clientCapabilities as { terminal: unknown }).terminal, false);
    assert.equal(created.cwd, t.workspace);
    assert.ok(path.isAbsolute(created.cwd as string));
    assert.deepEqual(created.mcpServers, []);
    assert.equal(ending(events).stopReason, 'completed');
    assertValidTurn(events);
  });

  it('fs/* and terminal/* requests are answered method-not-found (we advertised neither)', async () => {
    const { events } = await runChild('fs-request');
    const asked = agentLog().filter((e) => e.method === 'fs/read_text_file' || e.method === 'terminal/create');
    assert.deepEqual(
      asked.map((e) => [e.method, e.error]),
      [
        ['fs/read_text_file', -32601],
        ['terminal/create', -32601],
      ],
    );
    assert.equal(ending(events).stopReason, 'completed');
  });

  it('an agent that requires authenticate: ACP_AUTH_REQUIRED saying what to do, nothing prompted', async () => {
    const { events } = await runChild('auth');
    const end = ending(events);
    assert.equal(end.stopReason, 'error');
    assert.match(end.error!, /^ACP_AUTH_REQUIRED: The ACP agent "fix" wants to be authenticated/);
    assert.match(end.error!, /sign in with the agent's own command/);
    assert.equal(
      agentLog().some((e) => e.method === 'session/prompt'),
      false,
    );
  });

  it('an agent that crashes mid-prompt: error with its exit code and stderr tail, the streamed text kept', async () => {
    const { events, pgid } = await runChild('crash');
    const end = ending(events);
    assert.equal(end.stopReason, 'error');
    assert.match(end.error!, /exited \(exit code 3\) before it finished its turn/);
    assert.match(end.error!, /out of cheese at step 2/);
    assert.match(
      ofType(events, 'assistant/message')
        .map((m) => m.text)
        .join(''),
      /working on it/,
    );
    assert.equal(groupAlive(pgid!), false);
    assertValidTurn(events);
  });

  it('stray non-JSON lines on its stdout are skipped, the turn completes', async () => {
    const { events } = await runChild('noisy');
    assert.equal(ending(events).stopReason, 'completed');
    assert.match(
      ofType(events, 'assistant/message')
        .map((m) => m.text)
        .join(''),
      /still fine/,
    );
  });

  it('a permission request under approval never: the reject_once option (never an allow, never reject_always when once is offered)', async () => {
    const { events } = await runChild('permission');
    assert.deepEqual(agentLog().find((e) => e.permission)?.permission, { outcome: 'selected', optionId: 'no' });
    const result = ofType(events, 'tool/result')[0];
    assert.equal(result.name, 'acp:execute');
    assert.equal(result.isError, true);
    assert.match(result.content, /answer: no/);
  });

  for (const [answer, optionId] of [
    ['allow', 'once'],
    ['deny', 'no'],
  ] as const) {
    it(`under escalate the human's ${answer} becomes ${optionId} (allow_always is never chosen)`, async () => {
      port = scriptedApproval(() => answer as ApprovalDecision);
      await runChild('permission', { approval: 'ask', approvalPort: port, childApproval: 'escalate', escalateTimeoutMs: 20_000 });
      assert.deepEqual(agentLog().find((e) => e.permission)?.permission, { outcome: 'selected', optionId });
      assert.equal(port.requests.length, 1);
      assert.equal(port.requests[0].tool, 'acp:execute');
      assert.match(port.requests[0].summary, /rm -rf build/);
      assert.equal(port.requests[0].grant, undefined, 'no "allow for this conversation" is offered');
      assert.equal(port.requests[0].reasonHeard, false, 'the panel asks for no reason the agent would never hear');
    });
  }

  // Decision 0125, amended in s60: the agent runs outside any OS sandbox, and what it asks for is
  // past the mode Arbor set for it. Under an explicit `--sandbox` (here workspace-write, as
  // `arbor send --sandbox workspace-write --approval auto` to an escalating child) nobody is asked.
  for (const sandbox of ['read-only', 'workspace-write'] as const) {
    it(`under a ${sandbox} ceiling the question is refused unasked (reject_once), though the port would allow`, async () => {
      port = scriptedApproval(() => 'allow' as ApprovalDecision);
      const { events } = await runChild('permission', {
        approval: 'ask',
        approvalPort: port,
        childApproval: 'escalate',
        escalateTimeoutMs: 20_000,
        ceiling: { sandbox, by: 'cli-sandbox' },
      });
      assert.deepEqual(agentLog().find((e) => e.permission)?.permission, { outcome: 'selected', optionId: 'no' });
      assert.equal(port.requests.length, 0, 'nobody was asked');
      const result = ofType(events, 'tool/result')[0];
      assert.equal(result.refusal?.outcome, 'ceiling');
    });
  }

  it('control: a full-access ceiling leaves the question to the human', async () => {
    port = scriptedApproval(() => 'allow' as ApprovalDecision);
    await runChild('permission', {
      approval: 'ask',
      approvalPort: port,
      childApproval: 'escalate',
      escalateTimeoutMs: 20_000,
      ceiling: { sandbox: 'full-access', by: 'cli-sandbox' },
    });
    assert.deepEqual(agentLog().find((e) => e.permission)?.permission, { outcome: 'selected', optionId: 'once' });
    assert.equal(port.requests.length, 1);
  });

  it("a permission request from the agent's own sub-session names that mirror as the asker, first in the lineage", async () => {
    port = scriptedApproval(() => 'allow' as ApprovalDecision);
    const { id, t } = await runChild('sub-permission', { approval: 'ask', approvalPort: port, childApproval: 'escalate', escalateTimeoutMs: 20_000 });
    const [mirror] = t.h.store.children(id);
    assert.ok(mirror, 'the sub-session is mirrored under the child');
    assert.equal(port.requests.length, 1);
    assert.equal(port.requests[0].sessionId, mirror.id);
    assert.deepEqual(port.requests[0].lineage?.slice(0, 2), [mirror.id, id]);
    assert.equal(port.requests[0].tool, 'acp:delete');
    assert.deepEqual(agentLog().find((e) => e.permission)?.permission, { outcome: 'selected', optionId: 'once' });
  });

  it('no answer by the escalate timeout is a denial', async () => {
    port = scriptedApproval(() => new Promise<ApprovalDecision>(() => undefined));
    await runChild('permission', { approval: 'ask', approvalPort: port, childApproval: 'escalate', escalateTimeoutMs: 300 });
    assert.deepEqual(agentLog().find((e) => e.permission)?.permission, { outcome: 'selected', optionId: 'no' });
  });

  it('a cancel while the human is asked: the question is answered cancelled, then session/cancel; the turn ends interrupted', async () => {
    port = scriptedApproval(() => new Promise<ApprovalDecision>(() => undefined));
    const { events, pgid } = await runChild(
      'permission',
      { approval: 'ask', approvalPort: port, childApproval: 'escalate', escalateTimeoutMs: 60_000 },
      {},
      async (id, h) => {
        await waitFor(() => port.requests.length > 0, 'the permission question');
        await h.interruptSubtree(id);
      },
    );
    assert.deepEqual(agentLog().find((e) => e.permission)?.permission, { outcome: 'cancelled' });
    assert.ok(agentLog().some((e) => e.method === 'session/cancel'));
    assert.equal(ending(events).stopReason, 'interrupted');
    assert.equal(groupAlive(pgid!), false);
  });

  it('cancel mid-stream: session/cancel, the agent answers cancelled, interrupted, no process left', async () => {
    const { events, pgid, r } = await runChild('slow', {}, {}, async (id, h) => {
      await waitFor(() => agentLog().some((e) => e.method === 'session/prompt'), 'the prompt');
      await h.interruptSubtree(id);
    });
    assert.equal(r.stopReason, 'interrupted');
    assert.ok(agentLog().some((e) => e.method === 'session/cancel'));
    assert.equal(ending(events).stopReason, 'interrupted');
    assert.equal(groupAlive(pgid!), false);
  });

  it('an agent that ignores session/cancel is killed with its group after the grace period', async () => {
    const started = Date.now();
    const { events, pgid } = await runChild('stubborn', {}, {}, async (id, h) => {
      await waitFor(() => agentLog().some((e) => e.method === 'session/prompt'), 'the prompt');
      await h.interruptSubtree(id);
    });
    assert.equal(ending(events).stopReason, 'interrupted');
    assert.equal(groupAlive(pgid!), false);
    assert.ok(Date.now() - started < 20_000);
  });

  it('a tool call never completed is closed with a stand-in; refusal and max_tokens map', async () => {
    const a = await runChild('unanswered');
    const result = ofType(a.events, 'tool/result')[0];
    assert.deepEqual([result.name, result.isError, result.content], ['acp:search', true, UNANSWERED]);
    assert.equal(ending(a.events).stopReason, 'completed');
    const b = await runChild('refusal');
    assert.equal(ending(b.events).stopReason, 'error');
    assert.match(ending(b.events).error!, /refused to go on \(refusal\)/);
    const c = await runChild('max-tokens');
    assert.equal(ending(c.events).stopReason, 'max-tokens');
  });

  it("the sandbox goes to the agent's mode through the table; a mode it does not offer refuses before the prompt", async () => {
    await runChild('modes', { sandbox: 'read-only' }, { modes: { 'read-only': 'ro', 'workspace-write': 'ask' } });
    assert.deepEqual(
      agentLog()
        .filter((e) => e.method === 'session/set_mode')
        .map((e) => e.modeId),
      ['ro'],
    );
    fs.rmSync(logFile);
    const { events } = await runChild('modes', { sandbox: 'read-only' }, { modes: { 'read-only': 'readonly-typo' } });
    assert.equal(ending(events).stopReason, 'error');
    assert.match(ending(events).error!, /^UNSUPPORTED_SANDBOX: .*"readonly-typo".*\(it offers: ask, ro, yolo\)/);
    assert.equal(
      agentLog().some((e) => e.method === 'session/prompt'),
      false,
    );
  });

  it('a sandbox the table does not name: the tool refuses before anything is created', async () => {
    const t = await w.reopen({ remote: { acp: [fixture('plain', { modes: { 'read-only': 'ro' } })] }, sandbox: 'workspace-write' });
    w.server.setFallback(() => ({ text: 'unused' }));
    const root = await t.h.createSession();
    w.server.setFallback((_b, i) => (i === 0 ? { toolCalls: [{ name: 'delegate_acp_fix', arguments: { prompt: 'x' } }] } : { text: 'ok' }));
    await root.accept('go');
    await t.h.settle();
    assert.equal(t.h.store.children(root.id).length, 0);
    const result = ofType((await t.h.store.inspect(root.id)).events, 'tool/result')[0];
    assert.match(result.content, /UNSUPPORTED_SANDBOX/);
    assert.equal(agentLog().length, 0, 'the agent was never started');
  });

  it('a command that does not exist: REMOTE_NOT_FOUND naming the setting', async () => {
    const { events } = await runChild('plain', {}, { command: '/nonexistent/acp-agent' });
    assert.match(ending(events).error!, /^REMOTE_NOT_FOUND: The ACP agent "fix" was not found: "\/nonexistent\/acp-agent".*arbor\.remote\.acp/);
  });

  // The instructions Arbor reads for a confined Claude Code child (decision 0122, amended s58) go
  // only to Claude Code's adapter: another agent (codex-acp) ignores them, and reading them cost every turn.
  it("the project's instructions: given only to an agent that names itself claude-agent-acp", async () => {
    const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-claude-config-'));
    try {
      fs.writeFileSync(path.join(configDir, 'CLAUDE.md'), 'USER-NOTES\n');
      const as = (name: string) => fixture('plain', { env: { ACP_SCENARIO: 'plain', ACP_LOG: logFile, ACP_AGENT_NAME: name, CLAUDE_CONFIG_DIR: configDir } });
      const opened = async (name: string, sandbox: 'read-only' | 'workspace-write' | 'full-access' = 'read-only') => {
        fs.rmSync(logFile, { force: true });
        const t = await w.reopen({ remote: { acp: [as(name)] }, sandbox });
        fs.writeFileSync(path.join(t.workspace, 'CLAUDE.md'), 'PROJECT-NOTES\n');
        const root = await t.h.createSession();
        const run = await t.h.subagents.start(root, 'acp:fix', { prompt: 'do the task' });
        const r = await run.result;
        await run.dispose();
        assert.equal(r.stopReason, 'completed', r.error);
        const news = agentLog().filter((e) => e.method === 'session/new');
        assert.equal(news.length, 1);
        return news[0]._meta;
      };
      for (const other of ['@agentclientprotocol/codex-acp', 'arbor-fixture', 'claude-agent-acp-fork'])
        assert.deepEqual(await opened(other), { claudeCode: { options: { settingSources: [] } } }, other);
      for (const claude of ['@agentclientprotocol/claude-agent-acp', '@zed-industries/claude-code-acp']) {
        const meta = (await opened(claude)) as { claudeCode: { options: { systemPrompt?: { append?: string } } } };
        assert.match(meta.claudeCode.options.systemPrompt?.append ?? '', /USER-NOTES[\s\S]*PROJECT-NOTES/, claude);
      }
      assert.equal(await opened('@agentclientprotocol/claude-agent-acp', 'full-access'), undefined, 'full access: Claude Code reads them itself');
    } finally {
      fs.rmSync(configDir, { recursive: true, force: true });
    }
  });
});
