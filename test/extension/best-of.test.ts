// The panel's side of Best of N (decision 0061): "Try N ways" from a message through the
// panel's request (no editor here: two ways of the conversation's model), the ways' nodes carry
// their group, the comparison lists each way's answer and files, "Apply this one" brings one in,
// a second apply is a conflict that changes nothing, the others are discarded on request, and
// malformed messages are refused before they reach the harness.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RequestSucceeded } from '../../src/protocol';
import { initRepo } from '../core/worktree/fixture';
import { until } from '../support/harness';
import { panelPerTest } from '../support/panel';

describe('extension: Best of N in the panel', () => {
  const w = panelPerTest({ panel: false, harness: { approval: 'never' } });

  const repo = (): string => initRepo(w.t.workspace);

  it('starts two ways from a message, compares them, applies one, conflicts on the second, discards the other', async () => {
    const ws = repo();
    let wrote = 0;
    w.server.setFallback((body) => {
      const last = body.messages[body.messages.length - 1];
      if (last.role === 'tool') return { text: 'wrote it' };
      if (body.messages.filter((m) => m.role === 'assistant').length > 0) return { text: 'ok' };
      return wrote++ === 0
        ? { text: 'the first answer' }
        : { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: `way ${wrote - 1}\n` } }] };
    });
    const root = await w.t.h.createSession();
    await root.accept('change a.txt', { kind: 'user' });
    await w.t.h.settle();
    const seq = root.session.events.find((e) => e.type === 'user/message')!.seq;
    const port = await w.view('panel');

    const reply = root.session.events.find((e) => e.type === 'assistant/message')!.seq;
    await w.c.receive(port, { type: 'bestof/start', id: 'p0', sessionId: root.id, seq: reply });
    const refused = port.done('p0');
    assert.ok(refused && !refused.ok);
    assert.match(refused.error, /needs the prompt each way should run/);

    await w.c.receive(port, { type: 'bestof/start', id: 's1', sessionId: root.id, seq });
    const started = port.done('s1') as RequestSucceeded<'bestof/start'> | undefined;
    assert.ok(started?.ok && started.group);
    assert.equal(started.ways.length, 2);
    const group = started.group;
    await w.t.h.settle();
    await until(() => started.ways.every((id) => port.node(id)?.bestOf?.group === group));
    assert.deepEqual(
      started.ways.map((id) => port.node(id)?.bestOf?.way),
      [1, 2],
    );

    await w.c.receive(port, { type: 'bestof/view', id: 'v1', group });
    const view = port.done('v1') as RequestSucceeded<'bestof/view'> | undefined;
    assert.ok(view?.ok);
    assert.equal(view.settled, true);
    assert.deepEqual(
      view.ways.map((x) => [x.worktree, x.outcome, x.files.map((f) => f.path)]),
      [
        ['open', 'wrote it', ['a.txt']],
        ['open', 'wrote it', ['a.txt']],
      ],
    );
    const [a, b] = started.ways;
    const wayA = fs.readFileSync(path.join((await w.t.h.worktrees.listing(a)).path, 'a.txt'), 'utf8');

    // Attack (session 50): "Discard the others" before any way was applied would leave no way's work at all.
    await w.c.receive(port, { type: 'bestof/discard-others', id: 'd0', group, sessionId: a });
    const early = port.done('d0');
    assert.ok(early && !early.ok && early.code === 'NOT_APPLIED', JSON.stringify(early));
    assert.deepEqual(
      [a, b].map((x) => w.t.h.store.summaryRef(x)?.worktree?.state),
      ['open', 'open'],
      'nothing was discarded',
    );

    await w.c.receive(port, { type: 'bestof/choose', id: 'c1', group, sessionId: a });
    const chose = port.done('c1') as RequestSucceeded<'bestof/choose'> | undefined;
    assert.ok(chose?.ok);
    assert.deepEqual([chose.applied, chose.files], [true, ['a.txt']]);
    assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), wayA);

    await w.c.receive(port, { type: 'bestof/choose', id: 'c2', group, sessionId: b });
    const second = port.done('c2') as RequestSucceeded<'bestof/choose'> | undefined;
    assert.ok(second?.ok);
    assert.equal(second.applied, false);
    assert.deepEqual(
      second.conflicts.map((c) => c.path),
      ['a.txt'],
    );
    assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), wayA, 'the conflict changed nothing');

    await w.c.receive(port, { type: 'bestof/discard-others', id: 'd1', group, sessionId: a });
    const discarded = port.done('d1') as RequestSucceeded<'bestof/discard-others'> | undefined;
    assert.ok(discarded?.ok);
    assert.equal(discarded.discarded, 1);
    await until(() => port.node(b)?.worktree?.state === 'discarded');
  });

  it('refuses malformed Best of N messages before they reach the harness', async () => {
    const port = await w.view('panel');
    await w.c.receive(port, { type: 'bestof/view', id: 'x1', group: '../etc' } as never);
    await w.c.receive(port, { type: 'bestof/start', id: 'x2', sessionId: 's-1', seq: -1 } as never);
    await w.c.receive(port, { type: 'bestof/choose', id: 'x3', group: 'g12345678', sessionId: '../../x' } as never);
    assert.equal(port.of('message/rejected').length, 3);
  });
});
