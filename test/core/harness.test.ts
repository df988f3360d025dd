import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { FeatureRow } from '../../src/core/feature/rows';
import { Harness, HarnessError, type HarnessErrorCode } from '../../src/core/harness';
import { fail, ok } from '../../src/core/tools/result';
import { onProgress } from '../support/changes';
import { harnessPerTest, makeHarness, until } from '../support/harness';

/** Rejects with a HarnessError of `code`. */
async function refusedWith(p: Promise<unknown>, code: HarnessErrorCode): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof HarnessError, `a HarnessError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    return true;
  });
}

describe('harness: the composition root and its public surface', () => {
  const w = harnessPerTest();

  it('opens only over existing workspace folders (NO_WORKSPACE)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-hx-'));
    try {
      const open = Harness.open({
        storeDir: path.join(dir, 'store'),
        workspace: [path.join(dir, 'missing')],
        model: { baseURL: w.server.baseURL, name: 'm', apiKey: 'k' },
        sandbox: 'workspace-write',
        approval: 'never',
      });
      await refusedWith(open, 'NO_WORKSPACE');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('creates, opens and reads sessions: a resident one from memory, a closed one from its log in a new harness', async () => {
    w.server.enqueue({ text: 'hello back' });
    const a = await w.t.h.createSession({ title: 'first' });
    assert.equal(w.t.h.resident(a.id), a);
    assert.equal(await w.t.h.openSession(a.id), a, 'open returns the resident agent');
    await w.t.h.send(a.id, 'hello');
    await w.t.h.settle();
    assert.equal((await w.t.h.readSession(a.id)).events.length, a.session.events.length);
    assert.equal(w.t.h.residentCount, 1);
    await w.t.h.close();
    const again = await Harness.open({ ...w.t.h.config });
    try {
      const s = await again.readSession(a.id);
      assert.equal(s.header.title, 'first');
      assert.ok(s.events.some((e) => e.type === 'assistant/message' && e.text === 'hello back'));
      assert.equal(again.resident(a.id), undefined, 'reading does not make it resident');
      assert.equal(await again.isSubagent(a.id), false);
    } finally {
      await again.close();
    }
  });

  it('releases a settled root from memory, never a running one; an open after it resumes it from its log', async () => {
    w.server.enqueue({ text: 'first answer' });
    const a = await w.t.h.createSession();
    await w.t.h.send(a.id, 'one');
    await w.t.h.settle();
    w.server.enqueue({ text: 'slow', chunkSize: 2, fault: { kind: 'stall', afterChunks: 1 } });
    const busy = await w.t.h.createSession();
    await w.t.h.send(busy.id, 'long');
    await until(() => busy.activity === 'running');
    assert.equal(w.t.h.releasable(busy.id), false);
    assert.equal(await w.t.h.release(busy.id), false, 'a running root stays');
    assert.equal(w.t.h.resident(busy.id), busy);
    assert.equal(w.t.h.releasable(a.id), true);
    const released: string[] = [];
    const off = w.t.h.observe((c) => c.type === 'live' && c.what === 'released' && released.push(c.sessionId));
    assert.equal(await w.t.h.release(a.id), true);
    off();
    assert.equal(w.t.h.resident(a.id), undefined);
    assert.deepEqual(released, [a.id], 'views hear it left');
    const back = await w.t.h.openSession(a.id);
    assert.notEqual(back, a);
    assert.ok(
      back.session.events.some((e) => e.type === 'assistant/message' && e.text === 'first answer'),
      'its history came back from the log',
    );
    await w.t.h.interruptSubtree(busy.id);
  });

  it('refuses unknown sessions, fork points and grants with codes', async () => {
    await refusedWith(w.t.h.send('s-nope', 'x'), 'UNKNOWN_SESSION');
    await refusedWith(w.t.h.runQueue('s-nope'), 'UNKNOWN_SESSION');
    await refusedWith(w.t.h.interruptSubtree('s-nope'), 'UNKNOWN_SESSION');
    w.server.enqueue({ text: 'done' });
    const a = await w.t.h.createSession();
    await a.accept('go');
    await a.idle();
    await refusedWith(w.t.h.forkSession(a.id, 999), 'NO_SUCH_EVENT');
    await refusedWith(w.t.h.forkSession(a.id, -1), 'NO_SUCH_EVENT');
    await refusedWith(w.t.h.revokeGrant(a.id, 'g-none'), 'UNKNOWN_GRANT');
    // A turn still running (its reply stalls): a fork point inside it has no turn/end yet.
    w.server.enqueue({ fault: { kind: 'stall', afterChunks: 0 } });
    await a.accept('hold on');
    await refusedWith(w.t.h.forkSession(a.id, a.session.events.length - 1), 'TURN_NOT_ENDED');
    assert.deepEqual(await w.t.h.interruptSubtree(a.id), [a.id]);
  });

  it('forks at the end of a turn under the source policy as it is now; deletes a subtree; refuses deleting a running one (RUNNING)', async () => {
    w.server.enqueue({ text: 'one' });
    const a = await w.t.h.createSession({ title: 'src' });
    await a.accept('first');
    await a.idle();
    await w.t.h.setPolicy(a.id, { sandbox: 'read-only', approval: 'never' });
    const f = await w.t.h.forkSession(a.id, 0);
    assert.equal(f.session.header.origin, 'fork');
    assert.equal(f.session.header.parentSession, a.id);
    assert.equal(f.session.header.title, 'Fork of src');
    const seedEnd = f.session.header.seedLength!;
    assert.equal(f.session.events[seedEnd - 1].type, 'turn/end', 'the seed ends at a turn/end');
    const own = f.session.events.slice(seedEnd).map((e) => e.type);
    assert.deepEqual(own, ['session/end-seed', 'sandbox/mode', 'approval/policy'], 'the policy as it is now, after the seed');
    assert.equal(await w.t.h.isSubagent(f.id), false);

    w.server.enqueue({ fault: { kind: 'stall', afterChunks: 0 } });
    await f.accept('hold on');
    await refusedWith(w.t.h.deleteSession(a.id), 'RUNNING');
    assert.deepEqual(await w.t.h.interruptSubtree(a.id), [f.id]);
    const deleted = await w.t.h.deleteSession(a.id);
    assert.deepEqual(deleted.sort(), [a.id, f.id].sort());
    assert.equal(w.t.h.resident(f.id), undefined);
    assert.equal(w.t.h.store.header(a.id), undefined);
  });

  it('setDefaults changes what sessions without their own policy run under, the fan-out limit and the goal round default', async () => {
    fs.writeFileSync(path.join(w.t.workspace, 'f.txt'), 'x');
    w.t.h.setDefaults({ sandbox: 'read-only', maxConcurrentChildren: 3, goalMaxRounds: 4, network: true });
    assert.equal(w.t.h.subagents.fanout.limit, 3);
    assert.equal(w.t.h.goals.defaultMaxRounds, 4);
    assert.equal(w.t.h.config.commands?.network, true);
    w.server.enqueue({ toolCalls: [{ id: 'w', name: 'write_file', arguments: { path: 'f.txt', content: 'y' } }] }, { text: 'ok' });
    const a = await w.t.h.createSession();
    await a.accept('write');
    await a.idle();
    const r = a.session.events.find((e) => e.type === 'tool/result');
    assert.ok(r && r.type === 'tool/result' && r.isError, 'read-only refused the write');
    assert.equal(fs.readFileSync(path.join(w.t.workspace, 'f.txt'), 'utf8'), 'x');
  });

  it('wires a feature row: its tool, its provider, its admit and tool hooks reach every agent; progress reaches onProgress', async () => {
    const admitted: string[] = [];
    const row: FeatureRow<{ name: string }> = {
      name: 'probe',
      wire({ tools, registerProvider }) {
        tools.register({
          name: 'probe',
          description: 'Reports progress, then answers.',
          parameters: { type: 'object', properties: {}, additionalProperties: false },
          async execute(_args, ctx) {
            ctx.progress?.('probing');
            return ok('probed');
          },
        });
        registerProvider({
          name: 'probe-provider',
          capabilities: { outputSchema: false, depthLimit: false, toolFilter: false, persona: false },
          inheritsParentContext: false,
          prepare: () => ({}),
        });
        return {
          service: { name: 'probe' },
          hooks: {
            admit: (_id, msg) => {
              admitted.push(msg.text);
              return msg.text !== 'skip me';
            },
            beforeToolCall: ({ call }) => (call.name === 'list_files' ? fail('APPROVAL_DENIED', 'listing is off') : undefined),
          },
        };
      },
    };
    const t = await makeHarness(w.server, { rows: [row] });
    try {
      assert.ok(t.h.subagents.providerNames.includes('probe-provider'));
      const progress: string[] = [];
      onProgress(t.h, (id, p) => progress.push(`${id}:${p.tool}:${p.text}`));
      w.server.enqueue(
        {
          toolCalls: [
            { id: 'p', name: 'probe', arguments: {} },
            { id: 'l', name: 'list_files', arguments: {} },
          ],
        },
        { text: 'done' },
      );
      const a = await t.h.createSession();
      await a.accept('skip me');
      await a.accept('run me');
      await t.h.settle();
      assert.deepEqual(admitted, ['skip me', 'run me'], 'the row admit composes with the goal row admit');
      assert.equal(a.session.events.filter((e) => e.type === 'turn/start').length, 1);
      const results = a.session.events.flatMap((e) => (e.type === 'tool/result' ? [`${e.callId}:${e.content}`] : []));
      assert.deepEqual(results, ['p:probed', 'l:listing is off']);
      assert.deepEqual(progress, [`${a.id}:probe:probing`]);
    } finally {
      await t.cleanup();
    }
  });
});
