import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as acp from '@agentclientprotocol/sdk/unstable';
import { acpMirrors } from '../../src/core/remote/acp-mirrors';
import { listAgents } from '../../src/core/subagent/control';
import { until } from '../support/harness';
import { panelPerTest } from '../support/panel';

// A real process playing `codex exec --json` (a plain answer), so the tree's badge is tested in
// the main suite without the pinned programs (their tier checks the real versions).
const FAKE_CODEX = `#!/usr/bin/env node
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
if (process.argv.includes('--version')) { process.stdout.write('codex-cli 0.171.0\\n'); process.exit(0); }
out({ type: 'thread.started', thread_id: 'thread-tree' });
out({ type: 'turn.started' });
out({ type: 'item.completed', item: { id: 'm', type: 'agent_message', text: 'done remotely' } });
out({ type: 'turn.completed', usage: { input_tokens: 12, cached_input_tokens: 8, output_tokens: 3 } });
`;

describe("extension: a remote child's node names its program and version", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-remote-tree-'));
  const fake = path.join(dir, 'codex');
  fs.writeFileSync(fake, FAKE_CODEX, { mode: 0o755 });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const w = panelPerTest({ harness: { remote: { codex: { command: fake } } } });

  it('the tree node and list_agents carry {program, version}; an own child has none', async () => {
    const root = await w.t.h.createSession();
    const run = await w.t.h.subagents.start(root, 'codex', { prompt: 'go', label: 'cx' });
    const r = await run.result;
    assert.equal(r.stopReason, 'completed', r.error);
    w.server.enqueue({ text: 'own child done' });
    const own = await w.t.h.subagents.start(root, 'spawn', { prompt: 'go too' });
    await own.result;
    await w.t.h.settle();

    assert.deepEqual(w.port.node(run.id)?.remote, { program: 'codex', version: 'codex-cli 0.171.0' });
    assert.equal(w.port.node(run.id)?.provider, 'codex');
    assert.equal(w.port.node(own.id)?.remote, undefined);

    const listed = await listAgents(w.t.h.subagents, root.id);
    assert.deepEqual(listed.find((l) => l.id === run.id)?.remote, { program: 'codex', version: 'codex-cli 0.171.0' });
    assert.equal(listed.find((l) => l.id === own.id)?.remote, undefined);

    // A reopened window reads it from the stored summary (no log read) and shows the same.
    await run.dispose();
    await own.dispose();
    await w.reopen({ storeDir: w.t.storeDir });
    const port = await w.view('panel');
    const snap = port.of('state/snapshot')[0];
    assert.deepEqual(snap.nodes.find((n) => n.id === run.id)?.remote, { program: 'codex', version: 'codex-cli 0.171.0' });
  });
});

describe("extension: an ACP agent's own sub-sessions (mirrors) in the tree", () => {
  const w = panelPerTest();

  it('a mirror is a node under its remote child: running, approval, settled as its agent says; Stop cancels it alone', async () => {
    const child = await w.t.h.createSession({ title: 'stands in for the ACP child' });
    const cancelled: string[] = [];
    const ctx = {
      childId: child.id,
      prompt: 'p',
      cwd: w.t.workspace,
      sandbox: 'workspace-write' as const,
      approvalPolicy: 'never' as const,
      signal: new AbortController().signal,
    };
    const kids = acpMirrors({ store: w.t.h.store, registry: w.t.h.subagents.mirrors, streamOf: (id) => w.t.h.streamOf(id) })(
      ctx,
      async (id) => {
        cancelled.push(id);
      },
      'acp:claude',
    );
    const announce = (state: acp.StateUpdate) =>
      kids.announce({ sessionId: 'ext-1', title: 'explorer', capabilities: { cancel: {} }, state } as acp.SubagentUpdate);
    const node = () =>
      w.port
        .of('tree/node')
        .map((m) => m.node)
        .filter((n) => n.parentId === child.id)
        .pop();
    await announce({ state: 'running' });
    await until(() => node()?.status === 'running');
    assert.equal(node()?.label, 'explorer');
    assert.deepEqual(node()?.remote, { program: 'acp:claude', announcedBy: child.id });
    await announce({ state: 'requires_action' });
    await until(() => node()?.status === 'approval');
    await announce({ state: 'running' });
    // The panel's Stop: session/cancel for it alone; the agent confirms.
    const stop = w.c.interrupt(node()!.id);
    await until(() => cancelled.length === 1);
    assert.deepEqual(cancelled, ['ext-1']);
    await announce({ state: 'idle', stopReason: 'cancelled' } as acp.StateUpdate);
    assert.deepEqual(await stop, [node()!.id]);
    await until(() => node()?.status === 'interrupted');
    await announce({ state: 'running' });
    await announce({ state: 'idle', stopReason: 'end_turn' } as acp.StateUpdate);
    await until(() => node()?.status === 'settled');
    await kids.close('completed');
  });
});
