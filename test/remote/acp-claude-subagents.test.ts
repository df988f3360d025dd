import assert from 'node:assert/strict';
import { listAgents } from '../../src/core/subagent/control';
import { agentHome, claudeLaunch, SANDBOX_MODE_IDS } from '../support/acp-agents';
import { makeHarness, until } from '../support/harness';
import type { ModelServer, Reply } from '../support/model-server';
import { assertValidTurn, harnessAndHomePerTest, ofType } from './world';

/** The tests' own offline launch of the adapter (test/support/acp-agents.ts). */
function launchOf(server: ModelServer, home: string) {
  const l = claudeLaunch(server, home);
  return { command: l.command, args: l.args, env: l.env };
}

/** The text of a Messages request's first user message (a subagent's conversation starts with its task). */
function firstUserText(body: unknown): string {
  const first = (body as { messages?: { role: string; content: unknown }[] }).messages?.find((m) => m.role === 'user');
  const c = first?.content;
  return typeof c === 'string' ? c : JSON.stringify(c ?? '');
}

// Issue 14.3 against a third-party agent: @agentclientprotocol/claude-agent-acp 0.101.0 runs
// Claude Code's native subagents (its Agent tool) and, to a client that advertises
// `subagents`, announces each with `subagent_update` and streams it as its own session.
describe('remote: acp provider vs claude-agent-acp 0.101.0 — its native subagent mirrored into the tree', function () {
  this.timeout(120_000);
  const w = harnessAndHomePerTest();
  beforeEach(async () => {
    w.home = agentHome('claude-acp');
    w.t = await makeHarness(w.server, {
      remote: {
        acp: [
          {
            name: 'claude',
            ...launchOf(w.server, w.home),
            // acceptEdits: its default "auto" mode asks a model classifier before the Agent tool runs.
            modes: SANDBOX_MODE_IDS.claude,
            graceMs: 1500,
          },
        ],
      },
    });
  });

  /** The parent delegates to claude, whose main loop runs one Agent call; `sub` answers its subagent. */
  const script = (sub: Reply) =>
    w.server.setFallback((body, i) => {
      const wire = w.server.requests[i].wire;
      if (wire === 'chat') {
        const done = (body.messages ?? []).some((m) => m.role === 'tool');
        return done
          ? { text: 'parent done' }
          : { toolCalls: [{ name: 'delegate_acp_claude', arguments: { prompt: '[[claude]] delegate the counting', label: 'cl' } }] };
      }
      const all = JSON.stringify(body);
      if (firstUserText(body).includes('[[sub]]')) return sub;
      // Claude Code's side requests (a title, a suggestion) have no tools or are not the main loop.
      if (!all.includes('"name":"Agent"') || all.includes('SUGGESTION MODE')) return { text: 'ok' };
      const answered = all.includes('"type":"tool_result"');
      const reply: Reply = answered
        ? { text: 'The subagent counted.' }
        : { toolCalls: [{ name: 'Agent', arguments: { description: 'count things', prompt: '[[sub]] count to three', subagent_type: 'general-purpose' } }] };
      return reply;
    });

  it('the Agent tool’s subagent appears under the ACP child with its description as title, its transcript and settled status', async () => {
    script({ text: 'one two three' });
    const root = await w.t.h.createSession();
    await root.accept('delegate to claude');
    await w.t.h.settle();
    const [child] = w.t.h.store.children(root.id);
    const [remote] = ofType((await w.t.h.store.inspect(child.id)).events, 'subagent/remote');
    assert.equal(remote.program, 'acp:claude');
    const [mirror] = w.t.h.store.children(child.id);
    assert.ok(mirror, 'the native subagent is mirrored under the ACP child');
    assert.equal(mirror.title, 'count things');
    const ev = (await w.t.h.store.inspect(mirror.id)).events;
    const [r] = ofType(ev, 'subagent/remote');
    assert.equal(r.announcedBy, child.id);
    assert.notEqual(r.externalId, remote.externalId, 'a session of its own');
    assert.equal(
      ofType(ev, 'assistant/message')
        .map((m) => m.text)
        .join(''),
      'one two three',
    );
    assert.equal(ofType(ev, 'turn/end').at(-1)?.stopReason, 'completed');
    assertValidTurn(ev);
    const listed = await listAgents(w.t.h.subagents, root.id);
    assert.deepEqual(
      [child.id, mirror.id].map((id) => listed.find((l) => l.id === id)?.status),
      ['settled', 'settled'],
    );
    const result = ofType((await w.t.h.store.inspect(root.id)).events, 'tool/result').find((x) => x.name === 'delegate_acp_claude')!;
    assert.match(result.content, /The subagent counted/);
  });

  it('its subagent is cancelled alone (session/cancel with its id): its turn ends interrupted, the ACP child finishes', async () => {
    script({ text: 'counting slowly', chunkSize: 4, fault: { kind: 'stall', afterChunks: 1 } });
    const root = await w.t.h.createSession();
    await root.accept('delegate to claude');
    let mirrorId: string | undefined;
    await until(() => {
      const [child] = w.t.h.store.children(root.id);
      mirrorId = child && w.t.h.store.children(child.id)[0]?.id;
      return !!mirrorId && w.t.h.subagents.mirrors.isRunning(mirrorId);
    }, 60_000);
    const [child] = w.t.h.store.children(root.id);
    assert.deepEqual(await w.t.h.interruptSubtree(mirrorId!), [mirrorId]);
    const end = ofType((await w.t.h.store.inspect(mirrorId!)).events, 'turn/end').at(-1);
    assert.equal(end?.stopReason, 'interrupted');
    await w.t.h.settle();
    assert.equal(ofType((await w.t.h.store.inspect(child.id)).events, 'turn/end').at(-1)?.stopReason, 'completed');
    const listed = await listAgents(w.t.h.subagents, root.id);
    assert.equal(listed.find((l) => l.id === mirrorId)?.status, 'interrupted');
  });
});
