import assert from 'node:assert/strict';
import * as path from 'node:path';
import type { HarnessConfig } from '../../src/core/harness';
import type { AcpAgentSettings } from '../../src/core/remote/settings';
import { refusedActions } from '../../src/core/session/refusals';
import { REMOTE_BOUNDS } from '../../src/core/subagent/remote-bounds';
import { lastToolJson, waitFor } from '../core/subagent/helpers';
import { assertValidTurn, groupAlive, ofType, pgidOf, remoteWorld } from './world';

// A hostile ACP agent behind the `acp` provider (issue 20 point 6, decision 0044): what it
// streams, announces and asks is bounded, said, and never fails the turn or the host.
const HOSTILE = path.join(__dirname, '..', 'support', 'acp-hostile-agent.js');
const FIXTURE = path.join(__dirname, '..', 'support', 'acp-fixture-agent.js');

describe('remote: acp provider — a hostile agent is bounded', function () {
  this.timeout(120_000);
  const w = remoteWorld();
  const hostile = (scenario: string, env: Record<string, string> = {}, extra: Partial<AcpAgentSettings> = {}): AcpAgentSettings => ({
    name: 'hostile',
    command: process.execPath,
    args: [HOSTILE],
    env: { ACP_SCENARIO: scenario, ...env },
    graceMs: 300,
    ...extra,
  });

  /** The parent's model delegates once (foreground) and then answers; returns the child's log and what the parent's model was sent. */
  async function delegate(agent: AcpAgentSettings, o: Partial<HarnessConfig> = {}) {
    const t = await w.reopen({ remote: { acp: [agent] }, ...o });
    w.server.setFallback((_b, i) => (i === 0 ? { toolCalls: [{ name: `delegate_acp_${agent.name}`, arguments: { prompt: 'go' } }] } : { text: 'ok' }));
    const root = await t.h.createSession();
    await root.accept('delegate it');
    await t.h.settle();
    const [child] = t.h.store.children(root.id);
    const events = (await t.h.store.inspect(child.id)).events;
    return { t, root, child, events, parentRequest: w.server.requests[1] };
  }
  const keptBytes = (events: Awaited<ReturnType<typeof delegate>>['events']) =>
    ofType(events, 'assistant/message').reduce(
      (n, m) => n + Buffer.byteLength(m.text) + Buffer.byteLength(m.reasoning ?? '') + Buffer.byteLength(JSON.stringify(m.toolCalls ?? [])),
      0,
    ) + ofType(events, 'tool/result').reduce((n, r) => n + Buffer.byteLength(r.content), 0);

  it('100,000 chunks of 100 bytes: the log keeps at most the turn bound and says what it dropped; the parent gets a bounded answer', async () => {
    const { events, parentRequest } = await delegate(hostile('flood', { ACP_CHUNKS: '100000', ACP_CHUNK_BYTES: '100', ACP_TOOL: '0' }));
    assert.equal(ofType(events, 'turn/end')[0].stopReason, 'completed');
    assertValidTurn(events);
    assert.ok(keptBytes(events) <= REMOTE_BOUNDS.turnBytes + 4096, `kept ${keptBytes(events)} bytes`);
    const last = ofType(events, 'assistant/message').at(-1)!;
    assert.match(last.text, /\[Arbor kept only part of this remote turn: .* of text.* were dropped/);
    // The parent's next request carries the child's answer, bounded (head and tail, the note at the end).
    assert.ok(parentRequest.raw.length < REMOTE_BOUNDS.answerBytes + 64 * 1024, `the parent's request is ${parentRequest.raw.length} bytes`);
    const answer = lastToolJson<{ answer: string }>(parentRequest.body).answer;
    assert.match(answer, /Arbor left out .* of this .* answer here/);
    assert.match(answer, /Arbor kept only part of this remote turn/);
  });

  it('chunks of 7 MB and a 7 MB tool call: each piece is cut, the turn bound holds, the call and its result are kept short', async () => {
    const { events, parentRequest } = await delegate(hostile('flood', { ACP_CHUNKS: '3', ACP_CHUNK_BYTES: '7000000' }));
    assert.equal(ofType(events, 'turn/end')[0].stopReason, 'completed');
    assert.ok(keptBytes(events) <= REMOTE_BOUNDS.turnBytes + 4096, `kept ${keptBytes(events)} bytes`);
    const [result] = ofType(events, 'tool/result');
    assert.ok(Buffer.byteLength(result.content) <= REMOTE_BOUNDS.itemBytes + 200);
    const call = ofType(events, 'assistant/message').flatMap((m) => m.toolCalls ?? [])[0];
    assert.ok(call.arguments.length <= REMOTE_BOUNDS.itemBytes + 200, 'the call arguments are cut');
    assert.ok(parentRequest.raw.length < REMOTE_BOUNDS.answerBytes + 64 * 1024);
  });

  it('a usage past any count the log keeps (1e300 tokens): the turn still ends in a valid log, the count held at the most it keeps', async () => {
    const { events } = await delegate(hostile('usage'));
    assert.equal(ofType(events, 'turn/end')[0]?.stopReason, 'completed', JSON.stringify(ofType(events, 'turn/end')));
    assertValidTurn(events);
    const u = ofType(events, 'assistant/message').at(-1)!.usage!;
    assert.ok(Number.isSafeInteger(u.promptTokens) && Number.isSafeInteger(u.completionTokens), JSON.stringify(u));
    assert.equal(u.completionTokens, Number.MAX_SAFE_INTEGER);
  });

  it('endless ignored notifications: the wall-clock limit stops it (TURN_TIMEOUT), its group is gone', async () => {
    const t = await w.reopen({ remote: { acp: [hostile('chatter', {}, { turnTimeoutMs: 1500 })] } });
    const root = await t.h.createSession();
    const started = Date.now();
    const run = await t.h.subagents.start(root, 'acp:hostile', { prompt: 'chatter' });
    const pgid = await pgidOf(() => run.localAgent.session.events);
    const r = await run.result;
    await run.dispose();
    assert.equal(r.stopReason, 'error');
    assert.match(
      r.error!,
      /^TURN_TIMEOUT: acp:hostile was still working after 2 s, the wall-clock limit of one remote turn, and was stopped\. .*turnTimeoutMinutes/,
    );
    assert.ok(Date.now() - started < 30_000);
    await waitFor(() => !groupAlive(pgid), 'the agent group to be gone');
  });

  it('hundreds of sub-sessions with huge, terminal-driving titles and repeated or huge ids: a bounded tree of full-width ids', async () => {
    const { child, t, events } = await delegate(hostile('subs', { ACP_SUBS: '300', ACP_TITLE_BYTES: '100000' }));
    assert.equal(ofType(events, 'turn/end')[0].stopReason, 'completed');
    const mirrors = t.h.store.children(child.id);
    assert.equal(mirrors.length, REMOTE_BOUNDS.subSessions, 'at most the bound of sub-sessions is shown');
    assert.equal(new Set(mirrors.map((m) => m.id)).size, mirrors.length);
    for (const m of mirrors) {
      const suffix = m.id.slice(child.id.length + 1);
      assert.match(suffix, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'a full-width random id');
      assert.ok((m.title ?? '').length <= REMOTE_BOUNDS.titleChars, `a title of ${m.title?.length} characters`);
    }
    const externals = await Promise.all(mirrors.map(async (m) => ofType((await t.h.store.inspect(m.id)).events, 'subagent/remote')[0].externalId));
    assert.equal(new Set(externals).size, externals.length, 'a repeated id is the same sub-session, not another');
    assert.ok(!externals.some((x) => (x ?? '').length > 200), 'a huge id is not taken');
  });

  it('a sub-session state named "__proto__" (or "constructor", "toString") is an unknown state: the turn completes', async () => {
    const { child, t, events } = await delegate(hostile('proto'));
    const end = ofType(events, 'turn/end')[0];
    assert.equal(end.stopReason, 'completed', end.error);
    assert.match(
      ofType(events, 'assistant/message')
        .map((m) => m.text)
        .join(''),
      /still fine/,
    );
    assert.equal(t.h.store.children(child.id).length, 4);
  });

  it('refused permission requests are recorded like built-in refusals: the outcome reads "completed · N refused"', async () => {
    const t = await w.reopen({ remote: { acp: [hostile('refuse-many', { ACP_ASKS: '25' })] } });
    w.server.setFallback((_b, i) =>
      i === 0 ? { toolCalls: [{ name: 'delegate_acp_hostile', arguments: { prompt: 'go', mode: 'background' } }] } : { text: 'ok' },
    );
    const root = await t.h.createSession();
    await root.accept('delegate it');
    await t.h.settle();
    const [child] = t.h.store.children(root.id);
    const childEvents = (await t.h.store.inspect(child.id)).events;
    const refused = refusedActions(childEvents);
    assert.equal(refused.length, 25);
    assert.deepEqual([refused[0].tool, refused[0].what, refused[0].outcome], ['acp:execute', 'Run step 0: step 0', 'policy-never']);
    assert.equal((await t.h.store.summary(child.id)).refused, 25);
    const notice = ofType((await t.h.store.inspect(root.id)).events, 'user/message').find((m) => m.source.kind === 'subagent-result');
    assert.ok(notice, 'the background result reached the parent');
    assert.match(notice.text, /finished: completed · 25 refused\]/);
    const listed = JSON.parse(notice.text.slice(notice.text.indexOf('\n') + 1)).refused as string[];
    assert.equal(listed.length, 21, 'twenty listed, the rest counted');
    assert.equal(listed[20], '… and 5 more');
  });

  it("the parent's interrupt_agent stops a running one-shot remote child: interrupted, its program stopped", async () => {
    const agent: AcpAgentSettings = { name: 'fix', command: process.execPath, args: [FIXTURE], env: { ACP_SCENARIO: 'stubborn' }, graceMs: 300 };
    const t = await w.reopen({ remote: { acp: [agent] } });
    let childId = '';
    w.server.setFallback((body, i) => {
      if (i === 0) return { toolCalls: [{ name: 'delegate_acp_fix', arguments: { prompt: 'forever', mode: 'background' } }] };
      if (i === 1) {
        childId = lastToolJson<{ childId: string }>(body).childId;
        // Asked once the child's program runs (it streams forever and ignores session/cancel).
        return { toolCalls: [{ name: 'interrupt_agent', arguments: { agentId: childId } }], delayMs: 4000 };
      }
      return { text: 'stopped it' };
    });
    const root = await t.h.createSession();
    await root.accept('start it, then stop it');
    await waitFor(() => childId !== '', 'the child to start');
    const pgid = await pgidOf(() => t.h.resident(childId)?.session.events ?? []);
    await t.h.settle();
    const rootEvents = (await t.h.store.inspect(root.id)).events;
    const interrupt = ofType(rootEvents, 'tool/result').find((r) => r.name === 'interrupt_agent')!;
    assert.equal(JSON.parse(interrupt.content).effect, 'interrupted');
    const end = ofType((await t.h.store.inspect(childId)).events, 'turn/end')[0];
    assert.equal(end.stopReason, 'interrupted');
    assert.match(end.error ?? '', /stopped it \(interrupt_agent\)/);
    await waitFor(() => !groupAlive(pgid), 'the agent group to be gone');
  });
});
