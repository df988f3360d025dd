import assert from 'node:assert/strict';
import type * as acp from '@agentclientprotocol/sdk/unstable';
import type { AcpChildren } from '../../src/core/remote/acp-children';
import { acpMirrors } from '../../src/core/remote/acp-mirrors';
import type { RemoteTurnContext } from '../../src/core/remote/types';
import type { SessionEvent } from '../../src/core/session/events';
import { listAgents } from '../../src/core/subagent/control';
import { onDeltas, onEvents } from '../support/changes';
import { harnessPerTest } from '../support/harness';
import { assertValidTurn, ofType } from './world';

// The mirror mapping alone (decision 0041), fed the updates an ACP agent sends for its own
// sub-sessions, against a real harness and store: what each becomes in the tree, its log,
// its live status, a cancel, the end of the child's turn.
describe('remote: acp mirrors (an ACP agent’s own sub-sessions as sessions of the tree)', () => {
  const w = harnessPerTest();
  const cancelled: string[] = [];
  let parent: string;
  let abort: AbortController;

  const open = async (cancelWaitMs = 3000): Promise<AcpChildren> => {
    cancelled.length = 0;
    parent = (await w.t.h.createSession()).id;
    abort = new AbortController();
    const ctx: RemoteTurnContext = {
      childId: parent,
      prompt: 'p',
      cwd: w.t.workspace,
      sandbox: 'workspace-write',
      approvalPolicy: 'never',
      signal: abort.signal,
    };
    const factory = acpMirrors({ store: w.t.h.store, registry: w.t.h.subagents.mirrors, streamOf: (id) => w.t.h.streamOf(id), cancelWaitMs });
    return factory(
      ctx,
      async (id) => {
        cancelled.push(id);
      },
      'acp:claude',
    );
  };
  const sub = (u: Omit<acp.SubagentUpdate, 'sessionId'> & { sessionId: string }) => ({ sessionUpdate: 'subagent_update' as const, ...u });
  const chunk = (kind: 'agent_message_chunk' | 'user_message_chunk', text: string, extra: object = {}) =>
    ({ sessionUpdate: kind, content: { type: 'text', text }, ...extra }) as acp.SessionUpdate;
  /** Mirror id -> its ACP session id (from its `subagent/remote`), filled by `learn`. */
  const externals = new Map<string, string>();
  const mirrorOf = (externalId: string) => {
    const id = [...externals].find(([, e]) => e === externalId)?.[0];
    assert.ok(id, `a mirror of ${externalId}`);
    return w.t.h.store.header(id)!;
  };
  const events = async (id: string): Promise<readonly SessionEvent[]> => (await w.t.h.store.inspect(id)).events;
  const statusOf = async (id: string) => (await listAgents(w.t.h.subagents, parent)).find((l) => l.id === id)?.status;
  const learn = async () => {
    for (const h of w.t.h.store.descendants(parent)) externals.set(h.id, ofType(await events(h.id), 'subagent/remote')[0]?.externalId ?? '');
  };

  it('maps announcements, states and updates into valid logs: task, text, a call and its result, a nested child waiting for approval, an error', async () => {
    const seen: string[] = [];
    const deltas: string[] = [];
    const offs = [onEvents(w.t.h, (id, e) => seen.push(`${id}:${e.type}`)), onDeltas(w.t.h, (id, _k, d) => deltas.push(`${id}:${d}`))];
    const kids = await open();
    await kids.announce(sub({ sessionId: 'ext-1', title: 'explorer', capabilities: { cancel: {} }, state: { state: 'running' } }));
    await kids.update('ext-1', chunk('user_message_chunk', 'find the ', { messageId: 'm1' }));
    await kids.update('ext-1', chunk('user_message_chunk', 'config', { messageId: 'm1' }));
    await kids.update('ext-1', chunk('agent_message_chunk', 'Look'));
    await kids.update('ext-1', chunk('agent_message_chunk', 'ing.'));
    await kids.update('ext-1', {
      sessionUpdate: 'tool_call',
      toolCallId: 'c1',
      title: 'Read a.json',
      kind: 'read',
      status: 'pending',
      rawInput: { path: 'a.json' },
    });
    await kids.update('ext-1', {
      sessionUpdate: 'tool_call_update',
      toolCallId: 'c1',
      status: 'completed',
      content: [{ type: 'content', content: { type: 'text', text: '{"a":1}' } }],
    });
    await kids.update('ext-1', sub({ sessionId: 'ext-2', title: 'checker', state: { state: 'requires_action' } }));
    await kids.update('ext-1', { sessionUpdate: 'plan', entries: [] });
    await kids.update('ext-9', chunk('agent_message_chunk', 'never announced'));
    await learn();
    const one = mirrorOf('ext-1');
    const two = mirrorOf('ext-2');
    assert.equal(w.t.h.store.header(one.id)?.parentSession, parent);
    assert.equal(w.t.h.store.header(two.id)?.parentSession, one.id, 'announced on the mirror: under the mirror');
    assert.equal(w.t.h.store.header(two.id)?.delegationDepth, (w.t.h.store.header(one.id)?.delegationDepth ?? 0) + 1);
    assert.equal(await statusOf(one.id), 'running');
    assert.equal(await statusOf(two.id), 'approval', 'requires_action reads approval');
    assert.equal(w.t.h.subagents.hasLiveChildren(one.id), true);

    await kids.update('ext-1', chunk('agent_message_chunk', 'Found it.'));
    await kids.announce(sub({ sessionId: 'ext-1', state: { state: 'idle', stopReason: 'end_turn' } }));
    await kids.update(
      'ext-1',
      sub({ sessionId: 'ext-2', state: { state: 'idle', stopReason: 'error', error: { code: -32603, message: 'the check crashed' } } }),
    );
    assert.equal(await statusOf(one.id), 'settled');
    assert.equal(await statusOf(two.id), 'failed');

    const e1 = await events(one.id);
    assert.deepEqual(
      e1.map((e) => e.type),
      ['subagent/descriptor', 'subagent/remote', 'turn/start', 'user/message', 'assistant/message', 'tool/result', 'assistant/message', 'turn/end'],
    );
    const [d] = ofType(e1, 'subagent/descriptor');
    assert.deepEqual([d.provider, d.label, d.mode], ['acp:claude', 'explorer', 'one-shot']);
    assert.equal(ofType(e1, 'subagent/remote')[0].announcedBy, parent);
    assert.equal(ofType(e1, 'user/message')[0].text, 'find the config');
    const [call, last] = ofType(e1, 'assistant/message');
    assert.equal(call.text, 'Looking.');
    assert.deepEqual(
      call.toolCalls?.map((c) => [c.id, c.name, JSON.parse(c.arguments)]),
      [['c1', 'acp:read', { title: 'Read a.json', path: 'a.json' }]],
    );
    assert.equal(ofType(e1, 'tool/result')[0].content, '{"a":1}');
    assert.equal(last.text, 'Found it.');
    assert.equal(ofType(e1, 'turn/end')[0].stopReason, 'completed');
    assertValidTurn(e1);
    const end2 = ofType(await events(two.id), 'turn/end')[0];
    assert.equal(end2.stopReason, 'error');
    assert.match(end2.error ?? '', /the ACP agent "claude" reported that this sub-session failed: the check crashed/);

    assert.ok(seen.includes(`${one.id}:turn/end`) && seen.includes(`${two.id}:turn/start`), 'the views hear the mirrors');
    assert.ok(deltas.includes(`${one.id}:Look`), 'their text streams live');
    await kids.close('completed');
    assert.equal(w.t.h.subagents.mirrors.size, 0);
    for (const off of offs) off();
  });

  it('a cancel goes to that sub-session alone; an agent that does not confirm has its turn closed here; one it does not let be cancelled is refused', async () => {
    const kids = await open(200);
    await kids.announce(sub({ sessionId: 'ext-a', title: 'quiet', capabilities: { cancel: {} }, state: { state: 'running' } }));
    await kids.announce(sub({ sessionId: 'ext-b', title: 'stuck', state: { state: 'running' } }));
    await kids.announce(sub({ sessionId: 'ext-c', title: 'polite', capabilities: { cancel: {} }, state: { state: 'running' } }));
    await learn();
    const [a, b, c] = ['ext-a', 'ext-b', 'ext-c'].map((x) => mirrorOf(x));

    // It confirms: the agent's own idle (cancelled) ends the turn.
    const stopping = w.t.h.interruptSubtree(c.id);
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(cancelled, ['ext-c']);
    await kids.announce(sub({ sessionId: 'ext-c', state: { state: 'idle', stopReason: 'cancelled' } }));
    assert.deepEqual(await stopping, [c.id]);
    assert.equal(ofType(await events(c.id), 'turn/end')[0].stopReason, 'interrupted');
    assert.equal(ofType(await events(c.id), 'turn/end')[0].error, undefined);

    // It never confirms: closed here after the wait.
    assert.deepEqual(await w.t.h.interruptSubtree(a.id), [a.id]);
    const endA = ofType(await events(a.id), 'turn/end')[0];
    assert.equal(endA.stopReason, 'interrupted');
    assert.match(endA.error ?? '', /did not say within 0 s that it stopped/);
    assert.equal(await statusOf(a.id), 'interrupted');
    assert.equal(await statusOf(b.id), 'running', 'the others go on');

    await assert.rejects(
      w.t.h.interruptSubtree(b.id),
      (err: Error & { code?: string }) => err.code === 'NOT_CANCELLABLE' && /"stuck" is run by the ACP agent "claude"/.test(err.message),
    );
    assert.deepEqual(await w.t.h.interruptSubtree(parent), [], "in a subtree's stop it is left to its owner's stop");
    assert.deepEqual(cancelled, ['ext-c', 'ext-a']);

    // The child's turn is cancelled (disposal): what still runs ends `cancelled`.
    abort.abort('cancelled');
    await kids.close('interrupted');
    assert.equal(ofType(await events(b.id), 'turn/end')[0].stopReason, 'cancelled');
    assert.equal(w.t.h.subagents.mirrors.size, 0);
    await kids.update('ext-b', chunk('agent_message_chunk', 'too late'));
    assert.equal(ofType(await events(b.id), 'assistant/message').length, 0, 'nothing is written after the close');
  });

  it('work with no state said opens a turn; the child’s turn ending first closes it interrupted; a rename relabels it', async () => {
    const kids = await open();
    await kids.announce(sub({ sessionId: 'ext-x' }));
    await learn();
    const x = mirrorOf('ext-x');
    assert.equal(await statusOf(x.id), 'idle', 'announced with no state: nothing asserted, nothing open');
    await kids.update('ext-x', chunk('agent_message_chunk', 'working'));
    assert.equal(await statusOf(x.id), 'running');
    await kids.announce(sub({ sessionId: 'ext-x', title: 'renamed' }));
    assert.equal((await listAgents(w.t.h.subagents, parent)).find((l) => l.id === x.id)?.label, 'renamed');
    await kids.close('completed');
    const ev = await events(x.id);
    const end = ofType(ev, 'turn/end')[0];
    assert.equal(end.stopReason, 'interrupted');
    assert.match(end.error ?? '', /ended its turn while this sub-session was still working/);
    assert.equal(ofType(ev, 'assistant/message')[0].text, 'working');
    await assert.rejects(w.t.h.send(x.id, 'hello'), /"renamed" is run by the ACP agent "claude".*takes no messages/);
  });
});
