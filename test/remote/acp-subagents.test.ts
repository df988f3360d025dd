import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AcpAgentSettings } from '../../src/core/remote/settings';
import type { SessionHeader } from '../../src/core/session/events';
import { listAgents } from '../../src/core/subagent/control';
import { Script } from '../core/subagent/helpers';
import { arborBin } from '../support/cli-bundle';
import { makeHarness, type TestHarness, until } from '../support/harness';
import { ModelServer } from '../support/model-server';
import { assertValidTurn, groupAlive, ofType } from './world';

/** The child Arbor: this checkout's own CLI (built by tsc), serving ACP on stdio. */
const ARBOR_JS = arborBin();

// Issue 14.3: an ACP agent's own subagents (`subagent_update`) are mirrored under its node.
// The ACP agent is Arbor itself (`arbor acp`, its own store), on the same model server as the
// parent: both talk chat completions, and replies are routed by the `[[tag]]` of each
// agent's task (the parent's root, the child Arbor's root, the child Arbor's own children).
describe('remote: acp provider vs arbor acp itself (a child Arbor, its own subagents mirrored into the tree)', function () {
  this.timeout(120_000);
  let server: ModelServer;
  let t: TestHarness;
  let script: Script;
  let childStore: string;
  const arbor = (): AcpAgentSettings => ({
    name: 'arbor',
    command: process.execPath,
    // No --workspace: the child Arbor works in its cwd, the parent's workspace (the driver's session/new cwd).
    args: [ARBOR_JS, 'acp', '--store', childStore, '--base-url', server.baseURL, '--model', 'child-model', '--approval', 'never'],
    graceMs: 1500,
  });

  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(async () => {
    server.reset();
    script = new Script(server);
    childStore = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-acp-child-store-'));
    t = await makeHarness(server, { remote: { acp: [arbor()] } });
  });
  afterEach(async () => {
    await t.cleanup();
    fs.rmSync(childStore, { recursive: true, force: true });
  });

  /** The parent's root delegates `task` to the child Arbor, labelled `arbor-kid`. */
  const delegate = (task: string) =>
    script.on('root', { toolCalls: [{ name: 'delegate_acp_arbor', arguments: { prompt: task, label: 'arbor-kid' } }] }, { text: 'parent done' });
  const events = async (id: string) => (await t.h.store.inspect(id)).events;
  const text = async (id: string) =>
    ofType(await events(id), 'assistant/message')
      .map((m) => m.text)
      .join('');
  const byTitle = (kids: SessionHeader[], title: string) => {
    const k = kids.find((x) => x.title === title);
    assert.ok(k, `a mirror titled ${title} (have: ${kids.map((x) => x.title).join(', ')})`);
    return k;
  };

  it('a plain answer: the child Arbor shows up in the parent transcript as a delegate_acp_arbor call and its result, no mirrors', async () => {
    delegate('[[acp]] say hello');
    script.on('acp', { text: 'Hello from the child Arbor' });
    const root = await t.h.createSession();
    await root.accept('[[root]] ask the other Arbor');
    await t.h.settle();
    const [child] = t.h.store.children(root.id);
    const [remote] = ofType(await events(child.id), 'subagent/remote');
    assert.equal(remote.program, 'acp:arbor');
    assert.match(remote.externalId, /^s-/, "the child Arbor's own session id");
    assert.equal(groupAlive(remote.pgid!), false, 'no process left');
    assert.equal(await text(child.id), 'Hello from the child Arbor');
    assert.equal(ofType(await events(child.id), 'turn/end')[0].stopReason, 'completed');
    assert.deepEqual(t.h.store.children(child.id), [], 'nothing delegated, nothing mirrored');
    const parent = await events(root.id);
    const call = ofType(parent, 'assistant/message')
      .flatMap((m) => m.toolCalls ?? [])
      .find((c) => c.name === 'delegate_acp_arbor');
    assert.ok(call, 'the call is in the parent transcript');
    const result = ofType(parent, 'tool/result').find((r) => r.callId === call.id)!;
    assert.equal(result.isError, false);
    assert.match(result.content, /Hello from the child Arbor/);
    assert.equal(await text(root.id), 'parent done');
  });

  it("a delegating child Arbor: its own child appears under it in the parent's store (title, label, transcript, settled), read-only", async () => {
    delegate('[[acp]] have it counted');
    script.on(
      'acp',
      { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[counter]] count to three', label: 'counter' } }] },
      { text: 'The counter said one two three.' },
    );
    script.on('counter', { text: 'one two three' });
    const root = await t.h.createSession();
    await root.accept('[[root]] delegate to the other Arbor');
    await t.h.settle();
    const [child] = t.h.store.children(root.id);
    const [childRemote] = ofType(await events(child.id), 'subagent/remote');
    const mirrors = t.h.store.children(child.id);
    assert.equal(mirrors.length, 1);
    const m = byTitle(mirrors, 'counter');
    assert.equal(m.origin, 'subagent');
    assert.equal(m.delegationDepth, (child.delegationDepth ?? 0) + 1);
    const ev = await events(m.id);
    const [d] = ofType(ev, 'subagent/descriptor');
    assert.deepEqual([d.provider, d.mode, d.label], ['acp:arbor', 'one-shot', 'counter']);
    const [r] = ofType(ev, 'subagent/remote');
    assert.equal(r.announcedBy, child.id);
    assert.ok(r.externalId.startsWith(`${childRemote.externalId}.`), "the child Arbor's own child id (its lineage under the child's root)");
    assert.equal(await text(m.id), 'one two three');
    const task = ofType(ev, 'user/message').find((u) => u.text.includes('count to three'));
    assert.equal(task?.source.kind, 'delegation');
    assert.equal(ofType(ev, 'turn/end').at(-1)?.stopReason, 'completed');
    assertValidTurn(ev);
    // The one status fold, as list_agents reads it: the mirror settled, under the remote child.
    const listed = await listAgents(t.h.subagents, root.id);
    const row = listed.find((l) => l.id === m.id)!;
    assert.deepEqual([row.status, row.label, row.provider, row.parent, row.depth], ['settled', 'counter', 'acp:arbor', child.id, 2]);
    assert.equal(listed.find((l) => l.id === child.id)?.status, 'settled');
    assert.equal(t.h.subagents.mirrors.size, 0, 'nothing live is left of it');
    // The child Arbor's own answer is the parent's tool result.
    const result = ofType(await events(root.id), 'tool/result').find((x) => x.name === 'delegate_acp_arbor')!;
    assert.match(result.content, /The counter said one two three/);
    // Read-only: no message, no fork.
    await assert.rejects(t.h.send(m.id, 'count to four'), /is run by the ACP agent "arbor".*takes no messages/);
    await assert.rejects(t.h.forkSession(m.id, ev.length - 1), /cannot fork it/);
  });

  it('statuses settle through the one fold: a finished mirror settled, a failed one failed with its turn ended error', async () => {
    delegate('[[acp]] two jobs');
    script.on(
      'acp',
      {
        toolCalls: [
          { id: 'a', name: 'subagent', arguments: { prompt: '[[good]] work', label: 'good' } },
          { id: 'b', name: 'subagent', arguments: { prompt: '[[bad]] work', label: 'bad' } },
        ],
      },
      { text: 'one worked, one failed' },
    );
    script.on('good', { text: 'done well' });
    script.on('bad', { fault: { kind: 'status', status: 400, message: 'the model refused this request' } });
    const root = await t.h.createSession();
    await root.accept('[[root]] go');
    await t.h.settle();
    const [child] = t.h.store.children(root.id);
    const kids = t.h.store.children(child.id);
    const good = byTitle(kids, 'good');
    const bad = byTitle(kids, 'bad');
    const listed = await listAgents(t.h.subagents, root.id);
    assert.equal(listed.find((l) => l.id === good.id)?.status, 'settled');
    assert.equal(listed.find((l) => l.id === bad.id)?.status, 'failed');
    const badEnd = ofType(await events(bad.id), 'turn/end').at(-1)!;
    assert.equal(badEnd.stopReason, 'error');
    assert.match(badEnd.error ?? '', /the ACP agent "arbor" reported that this sub-session failed/);
    assert.equal(await text(good.id), 'done well');
    assert.equal(ofType(await events(child.id), 'turn/end')[0].stopReason, 'completed');
  });

  it('one mirror is cancelled alone (session/cancel): its turn ends interrupted; the child Arbor and its other child go on', async () => {
    delegate('[[acp]] start two');
    script.on(
      'acp',
      {
        toolCalls: [
          { id: 's', name: 'subagent', arguments: { prompt: '[[slow]] take your time', label: 'slow', mode: 'background' } },
          { id: 't', name: 'subagent', arguments: { prompt: '[[steady]] answer after a while', label: 'steady', mode: 'background' } },
        ],
      },
      { text: 'started both' },
    );
    script.on('slow', { text: 'thinking hard', chunkSize: 4, fault: { kind: 'stall', afterChunks: 1 } });
    script.on('steady', { text: 'steady answer', delayMs: 5000 });
    const root = await t.h.createSession();
    await root.accept('[[root]] go');
    let child: SessionHeader | undefined;
    const mirror = (title: string) => (child ? t.h.store.children(child.id).find((k) => k.title === title) : undefined);
    await until(() => {
      child ??= t.h.store.children(root.id)[0];
      const slow = mirror('slow');
      const steady = mirror('steady');
      return !!slow && !!steady && t.h.subagents.mirrors.isRunning(slow.id) && t.h.subagents.mirrors.isRunning(steady.id);
    }, 60_000);
    const slow = mirror('slow')!;
    const steady = mirror('steady')!;
    assert.deepEqual(await t.h.interruptSubtree(slow.id), [slow.id]);
    const slowEnd = ofType(await events(slow.id), 'turn/end').at(-1);
    assert.equal(slowEnd?.stopReason, 'interrupted', 'its own turn ended, as the child Arbor said');
    assert.equal(t.h.resident(child!.id)?.activity, 'running', 'the child Arbor goes on');
    assert.equal(t.h.subagents.mirrors.isRunning(steady.id), true, 'its other child goes on');
    await t.h.settle();
    assert.equal(ofType(await events(steady.id), 'turn/end').at(-1)?.stopReason, 'completed');
    assert.equal(await text(steady.id), 'steady answer');
    assert.equal(ofType(await events(child!.id), 'turn/end')[0].stopReason, 'completed');
    const listed = await listAgents(t.h.subagents, root.id);
    assert.deepEqual(
      [slow.id, steady.id, child!.id].map((id) => listed.find((l) => l.id === id)?.status),
      ['interrupted', 'settled', 'settled'],
    );
    assert.equal(await text(root.id), 'parent done');
  });
});
