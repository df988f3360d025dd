import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RewindPreview } from '../../src/protocol';
import { FakePort } from '../support/fake-port';
import { panelPerTest } from '../support/panel';

// The panel's rewind through the controller (decision 0059): a preview first, nothing written;
// the apply of that very preview, a conflict refused without a choice (with its code), an undo.
describe('extension: rewind/preview and rewind/apply', () => {
  const w = panelPerTest({ panel: false });

  it('previews, refuses an undecided conflict with its code, applies the choices, and undoes', async () => {
    const port = new FakePort('panel');
    w.c.connect(port);
    const ws = fs.realpathSync(w.t.workspace);
    fs.writeFileSync(path.join(ws, 'a.txt'), 'a0\n');
    w.server.enqueue(
      {
        toolCalls: [
          { name: 'write_file', arguments: { path: 'a.txt', content: 'a1\n' } },
          { name: 'write_file', arguments: { path: 'b.txt', content: 'b1\n' } },
        ],
      },
      { text: 'done' },
    );
    await w.c.receive(port, { type: 'chat/send', id: 'r1', text: 'edit' });
    const id = port.sessionOf('r1');
    await w.t.h.settle();
    fs.writeFileSync(path.join(ws, 'a.txt'), 'mine\n'); // the user edits after the agent
    const seq = w.t.h.resident(id)!.session.events.find((e) => e.type === 'user/message')!.seq;

    await w.c.receive(port, { type: 'rewind/preview', id: 'p1', sessionId: id, seq, subtree: false });
    const done = port.done('p1');
    assert.ok(done?.ok, JSON.stringify(done));
    const preview = (done as unknown as { preview: RewindPreview }).preview;
    assert.deepEqual(
      preview.files.map((f) => [f.path, f.action, f.conflict?.reason]),
      [
        ['a.txt', 'restore', 'edited-since'],
        ['b.txt', 'remove', undefined],
      ],
    );
    assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), 'mine\n', 'the preview wrote nothing');

    await w.c.receive(port, { type: 'rewind/apply', id: 'a1', sessionId: id, seq, what: 'files', token: preview.token, choices: [null, null] });
    const refused = port.done('a1');
    assert.equal(refused?.ok, false);
    assert.equal(refused && !refused.ok ? refused.code : undefined, 'CONFLICT');
    assert.ok(fs.existsSync(path.join(ws, 'b.txt')), 'nothing written');

    // Attack (session 50): the preview's token with another point: the files would go back to one point, the fork to another.
    const later = w.t.h.resident(id)!.session.events.length - 1;
    await w.c.receive(port, { type: 'rewind/apply', id: 'a1b', sessionId: id, seq: later, what: 'both', token: preview.token, choices: ['keep', null] });
    const elsewhere = port.done('a1b');
    assert.ok(elsewhere && !elsewhere.ok && /another point of the conversation/.test(elsewhere.error), JSON.stringify(elsewhere));
    assert.ok(fs.existsSync(path.join(ws, 'b.txt')), 'nothing written');
    assert.equal(w.t.h.store.list().length, 1, 'no fork made');

    await w.c.receive(port, { type: 'rewind/apply', id: 'a2', sessionId: id, seq, what: 'files', token: preview.token, choices: ['keep', null] });
    const applied = port.done('a2') as unknown as { ok: true; restored: number; kept: number; undoSeq: number };
    assert.equal(applied.ok, true);
    assert.deepEqual([applied.restored, applied.kept], [1, 1]);
    assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), 'mine\n', 'kept as chosen');
    assert.equal(fs.existsSync(path.join(ws, 'b.txt')), false);

    await w.c.receive(port, { type: 'rewind/apply', id: 'a3', sessionId: id, seq, what: 'files', token: preview.token, choices: ['keep', null] });
    assert.match(
      (port.done('a3') as { error?: string }).error ?? '',
      /applied already or is no longer kept; choose Rewind… again/,
      'a preview is applied once',
    );

    await w.c.receive(port, { type: 'rewind/preview', id: 'p2', sessionId: id, seq: applied.undoSeq, subtree: false, undo: true });
    const undo = (port.done('p2') as unknown as { preview: RewindPreview }).preview;
    assert.equal(undo.undo, true);
    await w.c.receive(port, { type: 'rewind/apply', id: 'a4', sessionId: id, seq: applied.undoSeq, what: 'files', token: undo.token, choices: [null] });
    assert.ok(port.done('a4')?.ok);
    assert.equal(fs.readFileSync(path.join(ws, 'b.txt'), 'utf8'), 'b1\n', 'undone');
  });

  it('rejects a malformed rewind message before any handler', async () => {
    const port = new FakePort('panel');
    w.c.connect(port);
    await w.c.receive(port, { type: 'rewind/apply', id: 'x', sessionId: 's-1', seq: 1, what: 'everything', choices: [] });
    await w.c.receive(port, { type: 'rewind/apply', id: 'y', sessionId: 's-1', seq: 1, what: 'files', choices: ['overwrite'] });
    await w.c.receive(port, { type: 'rewind/preview', id: 'z', sessionId: 's-1', seq: -1, subtree: false });
    assert.equal(port.of('message/rejected').length, 3);
  });
});
