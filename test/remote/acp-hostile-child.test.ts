import assert from 'node:assert/strict';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import type { HarnessConfig } from '../../src/core/harness';
import type { ApprovalDecision } from '../../src/core/policy/approval';
import type { AcpAgentSettings } from '../../src/core/remote/settings';
import { refusedActions } from '../../src/core/session/refusals';
import { listAgents } from '../../src/core/subagent/control';
import { REMOTE_BOUNDS } from '../../src/core/subagent/remote-bounds';
import { scriptedApproval } from '../support/scripted-approval';
import { assertValidTurn, ofType, remoteWorld } from './world';

// A hostile ACP agent (session 49): what it reports of its spending and what it asks the human
// must not break the child's log, its status or the host. The floods and sub-session trees are
// in acp-hostile.test.ts; these are the numbers and the questions.
const HOSTILE = path.join(__dirname, '..', 'support', 'acp-hostile-agent.js');

describe('remote: acp provider — a hostile agent’s numbers and questions', function () {
  this.timeout(120_000);
  const w = remoteWorld();
  const hostile = (scenario: string, env: Record<string, string> = {}): AcpAgentSettings => ({
    name: 'hostile',
    command: process.execPath,
    args: [HOSTILE],
    env: { ACP_SCENARIO: scenario, ...env },
    graceMs: 300,
  });

  async function runChild(agent: AcpAgentSettings, o: Partial<HarnessConfig> = {}) {
    const t = await w.reopen({ remote: { acp: [agent] }, ...o });
    const root = await t.h.createSession();
    const run = await t.h.subagents.start(root, `acp:${agent.name}`, { prompt: 'go' });
    const r = await run.result;
    await run.dispose();
    const events = (await t.h.store.inspect(run.id)).events;
    return { t, r, root, events, id: run.id };
  }

  /** The most the heap grew (after a full collection, sampled every 200 ms) while `run` ran. */
  async function heapGrowth(run: () => Promise<void>): Promise<number> {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    gc();
    const before = process.memoryUsage().heapUsed;
    let most = 0;
    const sampler = setInterval(() => {
      gc();
      most = Math.max(most, process.memoryUsage().heapUsed - before);
    }, 200);
    try {
      await run();
    } finally {
      clearInterval(sampler);
    }
    return most;
  }

  it('200 sub-sessions announced under 2 MB ids each: the host does not keep them (its heap stays within 150 MiB of where it was)', async () => {
    const most = await heapGrowth(async () => {
      const { r, events } = await runChild(hostile('sub-ids', { ACP_SUBS: '200', ACP_ID_BYTES: '2000000', ACP_HOLD_MS: '1500' }));
      assert.equal(r.stopReason, 'completed', r.error);
      assertValidTurn(events);
    });
    assert.ok(most < 150 * 1024 * 1024, `the heap grew by ${Math.round(most / 1024 / 1024)} MiB`);
  });

  it('60 tool calls left open under 4 MB ids each: the host keeps their ids short (its heap stays within 150 MiB of where it was)', async () => {
    const most = await heapGrowth(async () => {
      const { r, events } = await runChild(hostile('call-ids', { ACP_CALLS: '60', ACP_ID_BYTES: '4000000', ACP_HOLD_MS: '1500' }));
      assert.equal(r.stopReason, 'completed', r.error);
      assertValidTurn(events);
      assert.equal(ofType(events, 'tool/result').length, 60, 'each closed with a stand-in');
    });
    assert.ok(most < 150 * 1024 * 1024, `the heap grew by ${Math.round(most / 1024 / 1024)} MiB`);
  });

  it('a usage of 1e308 tokens (past 2^53): the turn still completes with its answer, the usage held to safe integers', async () => {
    const { r, events, t, root } = await runChild(hostile('usage'));
    assert.equal(r.stopReason, 'completed', r.error);
    assertValidTurn(events);
    const last = ofType(events, 'assistant/message').at(-1)!;
    assert.match(last.text, /spent it all/, 'the answer is kept');
    const u = last.usage!;
    for (const n of [u.promptTokens, u.completionTokens, u.cacheHitTokens ?? 0]) assert.ok(Number.isSafeInteger(n) && n > 0, `${n} is a count`);
    const [listed] = await listAgents(t.h.subagents, root.id);
    assert.ok(Number.isFinite(listed.tokens?.prompt) && listed.tokens!.prompt > 0, 'the roll-up counts it, finite');
  });

  it('50 permission questions at once with 20 KB titles under escalate: asked one at a time, at most 16 open, the rest refused at once, each summary short', async () => {
    let open = 0;
    let most = 0;
    const port = scriptedApproval(async () => {
      open++;
      most = Math.max(most, open);
      // The first answer waits until all 50 have come in (they are sent at once); the rest come quickly.
      await new Promise((r) => setTimeout(r, port.requests.length === 1 ? 3000 : 50));
      open--;
      return 'allow' as ApprovalDecision;
    });
    const { r, events } = await runChild(hostile('ask-flood', { ACP_ASKS: '50', ACP_TITLE_BYTES: '20000' }), {
      approval: 'ask',
      approvalPort: port,
      childApproval: 'escalate',
      escalateTimeoutMs: 60_000,
    });
    assert.equal(r.stopReason, 'completed', r.error);
    assertValidTurn(events);
    assert.equal(most, 1, 'the human sees one question of the child at a time');
    assert.equal(port.requests.length, REMOTE_BOUNDS.questions, 'the line holds 16; the rest were never put to the human');
    for (const q of port.requests) assert.ok(q.summary.length <= REMOTE_BOUNDS.questionChars, `a summary of ${q.summary.length} characters`);
    const said = ofType(events, 'assistant/message')
      .map((m) => m.text)
      .join('\n');
    const answers = /answers: (\S*)/.exec(said)?.[1]?.split(',') ?? assert.fail(said.slice(-2000));
    assert.equal(answers.filter((a) => a === 'yes').length, REMOTE_BOUNDS.questions);
    assert.equal(answers.filter((a) => a === 'no').length, 50 - REMOTE_BOUNDS.questions, 'refused with reject_once, never allowed');
    const refused = refusedActions(events);
    assert.equal(refused.length, 50 - REMOTE_BOUNDS.questions);
    assert.ok(refused.every((a) => a.outcome === 'too-many-questions' && a.what.length <= REMOTE_BOUNDS.questionChars));
  });

  for (const [sandbox, expected] of [
    ['read-only', 'read=yes,execute=yes,edit=no,delete=no,move=no,switch_mode=no,edit-unnamed=no'],
    ['workspace-write', 'read=yes,execute=yes,edit=yes,delete=yes,move=yes,switch_mode=no,edit-unnamed=yes'],
  ] as const) {
    it(`under escalate in ${sandbox}: a question no answer may allow there is refused unasked (writes in read-only, a mode switch anywhere)`, async () => {
      const port = scriptedApproval(() => 'allow' as ApprovalDecision);
      const { r, events } = await runChild(hostile('ask-kinds'), {
        approval: 'ask',
        approvalPort: port,
        childApproval: 'escalate',
        escalateTimeoutMs: 60_000,
        sandbox,
      });
      assert.equal(r.stopReason, 'completed', r.error);
      assertValidTurn(events);
      const said = ofType(events, 'assistant/message')
        .map((m) => m.text)
        .join('');
      assert.match(said, new RegExp(`answers: ${expected}$`));
      const asked = port.requests.map((q) => q.tool);
      assert.deepEqual(
        asked,
        expected
          .split(',')
          .filter((a) => a.endsWith('=yes'))
          .map((a) => `acp:${a.split('=')[0].replace('-unnamed', '')}`),
      );
      const refused = refusedActions(events).map((a) => a.outcome);
      assert.deepEqual(refused, sandbox === 'read-only' ? ['read-only', 'read-only', 'read-only', 'mode-fixed', 'read-only'] : ['mode-fixed']);
    });
  }

  it('a sub-session that goes idle and runs again 5,000 times under a new title each time: its log stays bounded', async () => {
    const { r, events, t, id } = await runChild(hostile('sub-churn', { ACP_CHURN: '5000' }));
    assert.equal(r.stopReason, 'completed', r.error);
    assertValidTurn(events);
    const [mirror] = t.h.store.children(id);
    assert.ok(mirror, 'the sub-session is mirrored');
    const logged = (await t.h.store.inspect(mirror.id)).events;
    assert.ok(logged.length < 500, `the mirror's log holds ${logged.length} events`);
    assert.equal(ofType(logged, 'turn/start').length, REMOTE_BOUNDS.subTurns);
    assert.equal(ofType(logged, 'turn/end').length, REMOTE_BOUNDS.subTurns);
    assert.equal(ofType(logged, 'subagent/descriptor').length, 1 + REMOTE_BOUNDS.relabels, 'its first label and so many renames');
  });

  it('a question still open when the agent ends its turn is withdrawn: the human is not left a card for a finished child', async () => {
    const signals: (AbortSignal | undefined)[] = [];
    const port = scriptedApproval((_req, signal) => {
      signals.push(signal);
      return new Promise<ApprovalDecision>(() => undefined); // the human never answers
    });
    const { r } = await runChild(hostile('late-ask'), { approval: 'ask', approvalPort: port, childApproval: 'escalate', escalateTimeoutMs: 60_000 });
    assert.equal(r.stopReason, 'completed', r.error);
    assert.equal(port.requests.length, 1, 'the question reached the human');
    assert.equal(signals[0]?.aborted, true, 'its card is withdrawn once the turn is over');
  });
});
