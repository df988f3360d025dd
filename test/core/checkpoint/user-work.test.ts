import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { RewindError } from '../../../src/core/checkpoint/plan';
import { subagentWorld } from '../subagent/helpers';
import { run, startOf, write } from './fixture';

// Probes: the user's own work around an agent's changes, and files of every kind, through a rewind.
describe('rewind: the user’s own work and unusual files', () => {
  const w = subagentWorld();
  const ws = () => fs.realpathSync(w.t.workspace);
  const file = (rel: string) => path.join(ws(), rel);
  const read = (rel: string) => (fs.existsSync(file(rel)) ? fs.readFileSync(file(rel), 'utf8') : null);

  it('an edit the user made between two of the agent’s turns is a conflict, never discarded unasked', async () => {
    w.script.on('root', { toolCalls: [write('n.txt', 'agent one\n')] }, { text: 'one' });
    await w.root.accept('[[root]] first');
    await w.t.h.settle();
    const point = await startOf(w.t.h, w.root.id);
    fs.writeFileSync(file('n.txt'), 'the user’s own line\n');
    w.script.on('root', { toolCalls: [write('n.txt', 'agent two\n')] }, { text: 'two' });
    await w.root.accept('[[root]] second');
    await w.t.h.settle();
    const plan = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: point });
    assert.deepEqual(
      plan.files.map((f) => [f.relative, f.conflict?.reason]),
      [['n.txt', 'edited-since']],
    );
    assert.match(plan.files[0].conflict?.text ?? '', /n\.txt/);
    await assert.rejects(w.t.h.checkpoints.apply(plan), (e: RewindError) => e.code === 'CONFLICT');
    assert.equal(read('n.txt'), 'agent two\n', 'nothing written');
    // Rewinding only the second turn goes back to the user's edit, with no question.
    const second = w.root.session.events.filter((e) => e.type === 'user/message')[1].seq;
    const back = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: second });
    assert.deepEqual(
      back.files.map((f) => [f.relative, f.conflict?.reason]),
      [['n.txt', undefined]],
    );
    await w.t.h.checkpoints.apply(back);
    assert.equal(read('n.txt'), 'the user’s own line\n');
  });

  it('an ignored file the agent overwrote with write_file (the user’s .env) comes back with a rewind', async () => {
    fs.writeFileSync(file('.gitignore'), '.env\n');
    fs.writeFileSync(file('.env'), 'TOKEN=the-user’s-own\n');
    w.script.on('root', { toolCalls: [write('.env', 'TOKEN=\n')] }, { text: 'done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    assert.equal(read('.env'), 'TOKEN=\n');
    const plan = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: await startOf(w.t.h, w.root.id) });
    assert.deepEqual(
      plan.files.map((f) => [f.relative, f.conflict?.reason]),
      [['.env', undefined]],
    );
    await w.t.h.checkpoints.apply(plan);
    assert.equal(read('.env'), 'TOKEN=the-user’s-own\n');
  });

  it('a script a command removed comes back executable', async () => {
    fs.writeFileSync(file('go.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
    fs.chmodSync(file('go.sh'), 0o755);
    w.script.on('root', { toolCalls: [run('rm go.sh')] }, { text: 'done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    assert.equal(fs.existsSync(file('go.sh')), false);
    const plan = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: await startOf(w.t.h, w.root.id) });
    await w.t.h.checkpoints.apply(plan);
    assert.equal(read('go.sh'), '#!/bin/sh\necho hi\n');
    assert.equal(fs.statSync(file('go.sh')).mode & 0o100, 0o100, 'the executable bit is back');
    // The rewind's own record keeps it too: undone, then redone, the script is executable again.
    const undo = await w.t.h.checkpoints.planUndo(w.root.id, w.root.session.events.length - 1);
    await w.t.h.checkpoints.apply(undo);
    assert.equal(fs.existsSync(file('go.sh')), false);
    const redo = await w.t.h.checkpoints.planUndo(w.root.id, w.root.session.events.length - 1);
    await w.t.h.checkpoints.apply(redo);
    assert.equal(fs.statSync(file('go.sh')).mode & 0o100, 0o100, 'executable after the undo is undone');
  });

  it('a script the rewind writes over is recorded executable by the write’s own stat: removed since, its undo makes it executable again', async () => {
    fs.writeFileSync(file('run.sh'), '#!/bin/sh\necho one\n', { mode: 0o755 });
    fs.chmodSync(file('run.sh'), 0o755);
    w.script.on('root', { toolCalls: [write('run.sh', '#!/bin/sh\necho two\n')] }, { text: 'done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const out = await w.t.h.checkpoints.apply(await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: await startOf(w.t.h, w.root.id) }));
    assert.equal(read('run.sh'), '#!/bin/sh\necho one\n');
    assert.equal(fs.statSync(file('run.sh')).mode & 0o777, 0o755, 'the write keeps the mode of what it overwrote');
    const record = w.root.session.events.find((e) => e.seq === out.seq);
    assert.equal(record?.type === 'checkpoint' && record.changes[0].beforeExecutable, true, 'the record says what it overwrote was executable');
    assert.ok(out.phases && out.phases.writes >= 0 && out.phases.record >= 0, 'the apply says where its time went');
    // The user removes the script; undoing the rewind (their removal is a conflict: restored) makes it again, executable as it was.
    fs.rmSync(file('run.sh'));
    await w.t.h.checkpoints.apply(await w.t.h.checkpoints.planUndo(w.root.id, out.seq!), {}, 'restore');
    assert.equal(read('run.sh'), '#!/bin/sh\necho two\n');
    assert.equal(fs.statSync(file('run.sh')).mode & 0o100, 0o100, 'executable after the undo');
  });

  it('a folder the user put where the agent’s file was: the plan says so, and nothing of the folder goes', async () => {
    w.script.on('root', { toolCalls: [write('d', 'agent file\n'), write('other.txt', 'agent\n')] }, { text: 'done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    fs.rmSync(file('d'));
    fs.mkdirSync(file('d'));
    fs.writeFileSync(file('d/mine.txt'), 'user work\n');
    const plan = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: await startOf(w.t.h, w.root.id) });
    assert.deepEqual(
      plan.files.map((f) => [f.relative, f.conflict?.reason]),
      [
        ['d', 'unavailable'],
        ['other.txt', undefined],
      ],
    );
    assert.match(plan.files[0].conflict?.text ?? '', /d is now a folder.*move that away/);
    // A folder put in another file's place after the preview: the apply refuses, changing nothing.
    fs.rmSync(file('other.txt'));
    fs.mkdirSync(file('other.txt'));
    await assert.rejects(w.t.h.checkpoints.apply(plan, {}, 'restore'), (e: RewindError) => e.code === 'STALE_PLAN' && /other\.txt/.test(e.message));
    fs.rmdirSync(file('other.txt'));
    fs.writeFileSync(file('other.txt'), 'agent\n');
    const out = await w.t.h.checkpoints.apply(plan, {}, 'restore');
    assert.deepEqual(out.kept, [file('d')]);
    assert.equal(read('other.txt'), null, 'the rest of the rewind went through');
    assert.equal(read('d/mine.txt'), 'user work\n', 'the user’s folder is whole');
  });

  it('a socket the user put where the agent’s file was: unavailable in the plan, a stale plan at the apply, never a raw error', async () => {
    w.script.on('root', { toolCalls: [write('s.sock', 'agent file\n'), write('other.txt', 'agent\n')] }, { text: 'done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    // A program's Unix socket (a language server, a dev server) now where the file was: open() says ENXIO.
    const listen = (p: string) =>
      new Promise<net.Server>((resolve, reject) => {
        const s = net.createServer();
        s.once('error', reject);
        s.listen(p, () => resolve(s));
      });
    fs.rmSync(file('s.sock'));
    const servers = [await listen(file('s.sock'))];
    try {
      const plan = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: await startOf(w.t.h, w.root.id) });
      assert.deepEqual(
        plan.files.map((f) => [f.relative, f.conflict?.reason]),
        [
          ['other.txt', undefined],
          ['s.sock', 'unavailable'],
        ].sort(),
      );
      // One put in another file's place after the preview: the apply refuses, changing nothing.
      fs.rmSync(file('other.txt'));
      servers.push(await listen(file('other.txt')));
      await assert.rejects(w.t.h.checkpoints.apply(plan, {}, 'restore'), (e: RewindError) => e.code === 'STALE_PLAN' && /other\.txt/.test(e.message));
      assert.equal(fs.lstatSync(file('s.sock')).isSocket(), true, 'the socket is left as it is');
    } finally {
      for (const s of servers) await new Promise((r) => s.close(r));
    }
  });

  it('empty, binary, large and oddly named files go back byte for byte', async () => {
    const big = Buffer.alloc(6 * 1024 * 1024, 7);
    const bin = Buffer.from([0, 1, 2, 255, 0, 10, 13, 0]);
    const odd = 'ü name\nwith newline.txt';
    fs.writeFileSync(file('empty.txt'), '');
    fs.writeFileSync(file('full.txt'), 'had content\n');
    fs.writeFileSync(file('bin.dat'), bin);
    fs.writeFileSync(file('big.dat'), big);
    fs.writeFileSync(file(odd), 'odd\n');
    w.script.on(
      'root',
      {
        toolCalls: [run('echo filled > empty.txt && : > full.txt && printf x >> bin.dat && printf y >> big.dat && for f in ü*; do echo changed > "$f"; done')],
      },
      { text: 'done' },
    );
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    assert.equal(read(odd), 'changed\n');
    const plan = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: await startOf(w.t.h, w.root.id) });
    assert.deepEqual(plan.files.map((f) => f.relative).sort(), ['big.dat', 'bin.dat', 'empty.txt', 'full.txt', odd].sort());
    await w.t.h.checkpoints.apply(plan);
    assert.equal(read('empty.txt'), '');
    assert.equal(read('full.txt'), 'had content\n');
    assert.deepEqual(fs.readFileSync(file('bin.dat')), bin);
    assert.deepEqual(fs.readFileSync(file('big.dat')), big);
    assert.equal(read(odd), 'odd\n');
  });
});
