// An attacker's review of the webview → host boundary (session 50): the view is assumed hostile
// (an injection in rendered model output, a bug), so it may post any message of a valid shape,
// about any node, at any time. What the host must hold whatever it is sent: a subagent never
// gets more than its parent gave it, no tab or harness is opened for nothing, and what a
// refusal echoes stays small. Real harness, real model server, real files.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PanelController } from '../../src/extension/controller';
import { FakePort } from '../support/fake-port';
import { PANEL_SETTINGS, panelPerTest } from '../support/panel';

describe('extension: hostile webview messages', () => {
  const w = panelPerTest({ panel: false });

  it('placement/start on a resting subagent never reopens it as a root: it keeps the only tool its parent gave it', async () => {
    const port = new FakePort('panel');
    w.c.connect(port);
    const root = await w.t.h.createSession();
    w.server.enqueue({ text: 'noted' });
    const { childId } = await w.t.h.subagents.startContinuable(root, 'spawn', { prompt: 'read only, please', label: 'reader', toolFilter: ['read_file'] });
    await w.t.h.settle();
    assert.equal(w.t.h.resident(childId), undefined, 'released after settling');

    // No placement by that name: refused, with its code. Before the fix the child was opened as a
    // root on the way (the deployment's tools, its queue pumped) and stayed resident so.
    await w.c.receive(port, { type: 'placement/start', id: 'p1', sessionId: childId, placement: 'nowhere', prompt: 'anything' });
    const refused = port.done('p1');
    assert.ok(refused && !refused.ok && refused.code === 'UNKNOWN_PLACEMENT', JSON.stringify(refused));
    assert.deepEqual(w.t.h.resident(childId)?.toolNames() ?? [], ['read_file', 'report'], 'resident as itself, or not at all');

    // What reaches it next (a grandchild's report goes through the runtime's deliver) runs as itself.
    w.server.enqueue({ toolCalls: [{ name: 'write_file', arguments: { path: 'pwned.txt', content: 'x' } }] }, { text: 'tried' });
    await w.t.h.subagents.deliver(childId, 'a report from below', { kind: 'subagent-report', fromSession: `${childId}.x`, mode: 'wakeup' });
    await w.t.h.settle();
    assert.equal(fs.existsSync(path.join(w.t.workspace, 'pwned.txt')), false, 'the read-only child wrote nothing');
    const result = (await w.t.h.readSession(childId)).events.find((e) => e.type === 'tool/result' && e.name === 'write_file');
    assert.ok(result?.type === 'tool/result' && result.isError && /Unknown tool "write_file"/.test(result.content), JSON.stringify(result));

    // The harness itself refuses to open a subagent as a conversation of its own.
    await assert.rejects(w.t.h.openSession(childId), (err: Error & { code?: string }) => err.code === 'NOT_ROOT' && /send it a message/.test(err.message));
  });

  it('transcript/open opens a tab only for a node that exists (no blank tabs by the thousand)', async () => {
    const port = new FakePort('panel');
    w.c.connect(port);
    for (let i = 0; i < 1000; i++) await w.c.receive(port, { type: 'transcript/open', sessionId: `s-nothing-${i}` });
    await w.c.receive(port, { type: 'transcript/open', sessionId: 'wf.0123456789abcdef' });
    assert.deepEqual(w.opened, [], 'no tab for an id the tree does not know');
    assert.equal(w.logs.filter((l) => /^error transcript\/open failed: No session s-nothing-\d+; no transcript tab was opened\.$/.test(l)).length, 1000);
    const real = await w.t.h.createSession();
    await w.c.receive(port, { type: 'transcript/open', sessionId: real.id });
    assert.deepEqual(w.opened, [real.id], 'a real session still opens');
  });

  it('after dispose nothing is acted on: no harness opened, a request answered CLOSED, a late approval question denied', async () => {
    let opened = 0;
    const logs: string[] = [];
    const c = new PanelController(
      async () => {
        opened++;
        return w.t.h;
      },
      { settings: () => PANEL_SETTINGS, openTranscript: () => undefined, log: (level, text) => logs.push(`${level} ${text}`), progress: (_t, work) => work() },
    );
    const port = new FakePort('panel');
    c.connect(port);
    await c.dispose();
    await c.receive(port, { type: 'webview/ready', view: 'panel' });
    await c.receive(port, { type: 'chat/send', id: 'late', text: 'hello after the window closed' });
    assert.equal(opened, 0, 'a disposed controller opened no harness (the host would never close it)');
    assert.equal(w.t.h.store.list().length, 0, 'no conversation was created');
    const done = port.done('late');
    assert.ok(done && !done.ok && done.code === 'CLOSED' && /closing/.test(done.error), JSON.stringify(done));
    assert.deepEqual(
      port.got.map((m) => m.type),
      ['request/done'],
      'no snapshot for a view that connects after dispose',
    );
    assert.ok(logs.some((l) => l === 'warn webview/ready arrived after the panel was disposed; ignored'));
    const reply = await c.ask({ sessionId: 's-x', tool: 'run_command', summary: 'rm -rf /', reason: 'outside the sandbox' });
    assert.equal(reply.decision, 'deny');
  });

  it('a burst of webview/ready in a repository runs one look for orphaned worktrees, not a git per message', async () => {
    execFileSync('git', ['init', '-q', w.t.workspace]);
    execFileSync('git', ['-C', w.t.workspace, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'base']);
    const wt = w.t.h.worktrees;
    const look = wt.orphans.bind(wt);
    let looks = 0;
    // Counted on the way through to the real look (git runs as ever).
    wt.orphans = () => {
      looks++;
      return look();
    };
    const port = new FakePort('panel');
    w.c.connect(port);
    // Before the fix each of these ran git (about 60 ms each on this machine: 1e5 of them, well over an hour of git).
    await Promise.all(Array.from({ length: 500 }, () => w.c.receive(port, { type: 'webview/ready', view: 'panel' })));
    assert.equal(port.of('worktree/orphans').length, 500, 'every ready is answered with the notice');
    assert.equal(looks, 1, `${looks} looks for 500 readies`);
    // A view connecting later gets a fresh look.
    await w.c.receive(port, { type: 'webview/ready', view: 'panel' });
    assert.equal(looks, 2);
  });

  it('a refused message of unknown type is echoed cut, not whole (a 10 MB type stays out of the log and the reply)', async () => {
    const port = new FakePort('panel');
    w.c.connect(port);
    await w.c.receive(port, { type: 'x'.repeat(10_000_000) });
    const detail = port.of('message/rejected')[0].detail;
    assert.equal(detail, `unknown type "${'x'.repeat(64)}…"`);
    assert.ok(w.logs.every((l) => l.length < 500));
  });
});
