import assert from 'node:assert/strict';
import * as path from 'node:path';
import type { HarnessConfig } from '../../src/core/harness';
import type { ApprovalDecision, ApprovalRequest } from '../../src/core/policy/approval';
import type { AcpAgentSettings } from '../../src/core/remote/settings';
import { repoRoot } from '../support/repo-root';
import { type ScriptedApproval, scriptedApproval } from '../support/scripted-approval';
import { assertValidTurn, byWire, groupAlive, ofType, remoteWorld } from './world';

const EXAMPLE = path.join(repoRoot(), '.tools', 'acp-agents', 'node_modules', '@agentclientprotocol', 'sdk', 'dist', 'examples', 'agent.js');
const example = (extra: Partial<AcpAgentSettings> = {}): AcpAgentSettings => ({
  name: 'example',
  command: process.execPath,
  args: [EXAMPLE],
  graceMs: 1500,
  ...extra,
});

describe('remote: acp provider vs the SDK 1.9.0 scripted example agent (no model)', function () {
  this.timeout(120_000);
  const w = remoteWorld();
  let port: ScriptedApproval;

  async function harness(decide: (r: ApprovalRequest) => ApprovalDecision | Promise<ApprovalDecision>, o: Partial<HarnessConfig> = {}) {
    port = scriptedApproval(decide);
    return w.reopen({ remote: { acp: [example()] }, approval: 'ask', approvalPort: port, ...o });
  }

  it('under approval never: text, a read call with its result, the edit it asks for refused (reject_once), no process left', async () => {
    const t = await w.reopen({ remote: { acp: [example()] } });
    byWire(w.server, {
      chat: [{ toolCalls: [{ name: 'delegate_acp_example', arguments: { prompt: 'fix the config', label: 'ex' } }] }, { text: 'parent done' }],
    });
    const root = await t.h.createSession();
    await root.accept('delegate it');
    await t.h.settle();
    const [child] = t.h.store.children(root.id);
    const s = await t.h.store.inspect(child.id);
    const remote = ofType(s.events, 'subagent/remote')[0];
    assert.equal(remote.program, 'acp:example');
    assert.match(remote.externalId, /^[0-9a-f]{32}$/);
    assert.equal(groupAlive(remote.pgid!), false);
    const calls = ofType(s.events, 'assistant/message').flatMap((m) => m.toolCalls ?? []);
    assert.deepEqual(
      calls.map((c) => [c.id, c.name]),
      [
        ['call_1', 'acp:read'],
        ['call_2', 'acp:edit'],
      ],
    );
    const results = ofType(s.events, 'tool/result');
    assert.match(results[0].content, /My Project/);
    assert.equal(results[0].isError, false);
    const text = ofType(s.events, 'assistant/message')
      .map((m) => m.text)
      .join('|');
    assert.match(text, /I'll help you with that/);
    assert.match(text, /prefer not to make that change/, 'the agent heard reject_once');
    assert.equal(ofType(s.events, 'turn/end')[0].stopReason, 'completed');
    assertValidTurn(s.events);
    const parent = await t.h.store.inspect(root.id);
    const result = ofType(parent.events, 'tool/result').find((r) => r.name === 'delegate_acp_example')!;
    assert.match(result.content, /skip the configuration update/);
  });

  it('under escalate: the human is asked with the child lineage; allow answers allow_once', async () => {
    const t = await harness(() => 'allow', { childApproval: 'escalate', escalateTimeoutMs: 20_000 });
    byWire(w.server, { chat: [{ toolCalls: [{ name: 'delegate_acp_example', arguments: { prompt: 'fix the config' } }] }, { text: 'parent done' }] });
    const root = await t.h.createSession();
    await root.accept('delegate it');
    await t.h.settle();
    const [child] = t.h.store.children(root.id);
    assert.deepEqual(
      port.requests.map((r) => [r.sessionId, r.tool, r.lineage]),
      [[child.id, 'acp:edit', [child.id, root.id]]],
    );
    assert.match(port.requests[0].summary, /Modifying critical configuration file/);
    const s = await t.h.store.inspect(child.id);
    const text = ofType(s.events, 'assistant/message')
      .map((m) => m.text)
      .join('|');
    assert.match(text, /successfully updated the configuration/);
  });
});
