import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RewindError } from '../../../src/core/checkpoint/plan';
import { eventsOf, subagentWorld } from '../subagent/helpers';
import { checkpointsOf, childNamed, delegate, run, startOf, write } from './fixture';

// Checkpoints per node and rewind, with the real git and the scripted model (decision 0059).
describe('checkpoints: what each step changed, and rewind per node or subtree', () => {
  const w = subagentWorld();
  const ws = () => fs.realpathSync(w.t.workspace);
  const file = (rel: string) => path.join(ws(), rel);
  const read = (rel: string) => (fs.existsSync(file(rel)) ? fs.readFileSync(file(rel), 'utf8') : null);

  it("records a command's changes, attributed to its call, and rewinds them", async () => {
    fs.writeFileSync(file('a.txt'), 'a0\n');
    fs.writeFileSync(file('b.txt'), 'b0\n');
    w.script.on('root', { toolCalls: [{ id: 'cmd1', ...run('echo a1 > a.txt && rm b.txt && echo c1 > c.txt') }] }, { text: 'done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const [cp] = checkpointsOf(w.root.session.events);
    assert.ok(cp, 'a checkpoint event was recorded');
    assert.deepEqual(
      cp.changes.map((c) => [path.basename(c.path), c.tool, c.callId, c.before === null, c.after === null]),
      [
        ['a.txt', 'run_command', 'cmd1', false, false],
        ['b.txt', 'run_command', 'cmd1', false, true],
        ['c.txt', 'run_command', 'cmd1', true, false],
      ],
    );
    const result = w.root.session.events.findIndex((e) => e.type === 'tool/result');
    assert.ok(w.root.session.events.indexOf(cp) < result, 'staged with the step, before its results');

    const plan = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: await startOf(w.t.h, w.root.id) });
    assert.deepEqual(
      plan.files.map((f) => [f.relative, f.conflict?.reason]),
      [
        ['a.txt', undefined],
        ['b.txt', undefined],
        ['c.txt', undefined],
      ],
    );
    assert.match(plan.files[0].diff, /-a1\n\+a0/);
    const out = await w.t.h.checkpoints.apply(plan);
    assert.equal(out.restored.length, 3);
    assert.equal(read('a.txt'), 'a0\n');
    assert.equal(read('b.txt'), 'b0\n');
    assert.equal(read('c.txt'), null);
  });

  it("rewinds one child's edits while a sibling's stay", async () => {
    w.script.on('root', { toolCalls: [delegate('c1'), delegate('c2')] }, { text: 'root done' });
    w.script.on('c1', { toolCalls: [write('x.txt', 'from c1\n')] }, { text: 'c1 done' });
    w.script.on('c2', { toolCalls: [write('y.txt', 'from c2\n')] }, { text: 'c2 done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const c1 = childNamed(w.t.h, w.root.id, 'c1');
    const [cp] = checkpointsOf(await eventsOf(w.t.h, c1));
    assert.deepEqual(
      cp.changes.map((c) => [path.basename(c.path), c.tool]),
      [['x.txt', 'write_file']],
    );
    const plan = await w.t.h.checkpoints.plan({ sessionId: c1, toSeq: await startOf(w.t.h, c1) });
    assert.deepEqual(
      plan.files.map((f) => f.relative),
      ['x.txt'],
    );
    await w.t.h.checkpoints.apply(plan);
    assert.equal(read('x.txt'), null, "c1's new file is gone");
    assert.equal(read('y.txt'), 'from c2\n', "c2's file stays");
  });

  it('shows a same-file conflict with a sibling and never overwrites it without a choice', async () => {
    w.script.on('root', { toolCalls: [delegate('c1')] }, { toolCalls: [delegate('c2')] }, { text: 'root done' });
    w.script.on('c1', { toolCalls: [write('shared.txt', 'one\n'), write('own.txt', 'mine\n')] }, { text: 'c1 done' });
    w.script.on('c2', { toolCalls: [write('shared.txt', 'two\n')] }, { text: 'c2 done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const c1 = childNamed(w.t.h, w.root.id, 'c1');
    const c2 = childNamed(w.t.h, w.root.id, 'c2');
    const plan = await w.t.h.checkpoints.plan({ sessionId: c1, toSeq: await startOf(w.t.h, c1) });
    const shared = plan.files.find((f) => f.relative === 'shared.txt');
    assert.equal(shared?.conflict?.reason, 'changed-by-other');
    assert.deepEqual(shared?.conflict?.by, [c2]);
    assert.match(shared?.conflict?.text ?? '', /c2 also changed shared\.txt/);
    assert.doesNotMatch(shared?.conflict?.text ?? '', /s-/, 'no raw session id in the words');
    const before = checkpointsOf(await eventsOf(w.t.h, c1)).length;
    await assert.rejects(w.t.h.checkpoints.apply(plan), (e: RewindError) => e.code === 'CONFLICT' && /shared\.txt/.test(e.message));
    assert.equal(read('shared.txt'), 'two\n', 'nothing written');
    assert.equal(read('own.txt'), 'mine\n', 'not even the files without a conflict');
    assert.equal(checkpointsOf(await eventsOf(w.t.h, c1)).length, before, 'nothing recorded');
    const out = await w.t.h.checkpoints.apply(plan, { [shared!.path]: 'keep' });
    assert.equal(read('shared.txt'), 'two\n', 'kept as chosen');
    assert.equal(read('own.txt'), null, "c1's own file went back");
    assert.deepEqual(out.kept, [shared!.path]);
  });

  it('a file the user edited after the agent is a conflict (edited-since); a stale preview is refused', async () => {
    w.script.on('root', { toolCalls: [write('n.txt', 'agent\n')] }, { text: 'done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    fs.writeFileSync(file('n.txt'), 'user\n');
    const plan = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: await startOf(w.t.h, w.root.id) });
    assert.equal(plan.files[0].conflict?.reason, 'edited-since');
    fs.writeFileSync(file('n.txt'), 'user again\n');
    await assert.rejects(w.t.h.checkpoints.apply(plan, {}, 'restore'), (e: RewindError) => e.code === 'STALE_PLAN');
    assert.equal(read('n.txt'), 'user again\n');
  });

  it('the plan reads files on its own thread but never through a link, nor waits on a FIFO put where a file was', async () => {
    w.script.on('root', { toolCalls: [write('l.txt', 'agent\n'), write('p.txt', 'agent\n')] }, { text: 'done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const secret = path.join(path.dirname(ws()), `secret-${process.pid}.txt`);
    fs.writeFileSync(secret, 'TOP SECRET\n');
    try {
      fs.rmSync(file('l.txt'));
      fs.symlinkSync(secret, file('l.txt'));
      const started = Date.now();
      // Neither is read nor replaced: each is said (kept as it is), and the rest of the rewind goes on.
      const linked = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: await startOf(w.t.h, w.root.id) });
      assert.deepEqual(
        linked.files.map((f) => [f.relative, f.conflict?.reason]),
        [
          ['l.txt', 'unavailable'],
          ['p.txt', undefined],
        ],
        'the link is not followed',
      );
      assert.doesNotMatch(JSON.stringify(linked), /TOP SECRET/);
      assert.match(linked.files[0].conflict?.text ?? '', /symbolic link.*move that away/);
      fs.rmSync(file('l.txt'));
      fs.writeFileSync(file('l.txt'), 'agent\n');
      fs.rmSync(file('p.txt'));
      execFileSync('mkfifo', [file('p.txt')]);
      const fifo = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: await startOf(w.t.h, w.root.id) });
      assert.deepEqual(
        fifo.files.map((f) => [f.relative, f.conflict?.reason]),
        [
          ['l.txt', undefined],
          ['p.txt', 'unavailable'],
        ],
      );
      const out = await w.t.h.checkpoints.apply(fifo);
      assert.deepEqual(
        out.restored.map((f) => path.basename(f)),
        ['l.txt'],
      );
      assert.equal(fs.lstatSync(file('p.txt')).isFIFO(), true, 'the FIFO is left as it is');
      assert.ok(Date.now() - started < 20_000, 'nothing blocked on the FIFO');
      assert.equal(fs.readFileSync(secret, 'utf8'), 'TOP SECRET\n');
    } finally {
      fs.rmSync(secret, { force: true });
    }
  });

  it('rewinds a subtree: the node and its descendants at every depth; without subtree only the node', async () => {
    w.script.on('root', { toolCalls: [delegate('c')] }, { text: 'root done' });
    w.script.on('c', { toolCalls: [write('c.txt', 'c\n')] }, { toolCalls: [delegate('g')] }, { text: 'c done' });
    w.script.on('g', { toolCalls: [write('g.txt', 'g\n'), run('echo gc > gc.txt')] }, { text: 'g done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const c = childNamed(w.t.h, w.root.id, 'c');
    const at = await startOf(w.t.h, c);
    const only = await w.t.h.checkpoints.plan({ sessionId: c, toSeq: at });
    assert.deepEqual(
      only.files.map((f) => f.relative),
      ['c.txt'],
    );
    const all = await w.t.h.checkpoints.plan({ sessionId: c, toSeq: at, subtree: true });
    assert.deepEqual(
      all.files.map((f) => f.relative),
      ['c.txt', 'g.txt', 'gc.txt'],
    );
    await w.t.h.checkpoints.apply(all);
    assert.deepEqual([read('c.txt'), read('g.txt'), read('gc.txt')], [null, null, null]);
  });

  it('a rewind is itself recorded and can be undone; a preview writes nothing', async () => {
    fs.writeFileSync(file('u.txt'), 'v0\n');
    w.script.on('root', { toolCalls: [{ name: 'edit_file', arguments: { path: 'u.txt', oldText: 'v0', newText: 'v1' } }] }, { text: 'done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    assert.equal(read('u.txt'), 'v1\n');
    const length = w.root.session.events.length;
    const plan = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: await startOf(w.t.h, w.root.id) });
    assert.equal(read('u.txt'), 'v1\n', 'the preview wrote nothing');
    assert.equal(w.root.session.events.length, length, 'and recorded nothing');
    const out = await w.t.h.checkpoints.apply(plan);
    assert.equal(read('u.txt'), 'v0\n');
    const rec = w.root.session.events.find((e) => e.seq === out.seq);
    assert.equal(rec?.type, 'checkpoint');
    assert.equal(await w.t.h.checkpoints.lastRewind(w.root.id), out.seq);
    const undo = await w.t.h.checkpoints.planUndo(w.root.id, out.seq!);
    assert.match(undo.files[0].diff, /-v0\n\+v1/);
    await w.t.h.checkpoints.apply(undo);
    assert.equal(read('u.txt'), 'v1\n', 'undone');
    assert.equal(await w.t.h.checkpoints.lastRewind(w.root.id), undefined, 'nothing left to undo');
  });

  it("records a workflow agent's writes in its own log, and rewinds them", async () => {
    const script = 'return await agent("[[wa]] write it", { label: "wa" });';
    w.script.on('root', { toolCalls: [{ name: 'workflow', arguments: { script, meta: { name: 'one', description: 'one agent' } } }] }, { text: 'root done' });
    w.script.on('wa', { toolCalls: [write('wf.txt', 'from the workflow agent\n')] }, { text: 'wa done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    assert.equal(read('wf.txt'), 'from the workflow agent\n');
    const wa = childNamed(w.t.h, w.root.id, 'wa');
    const [cp] = checkpointsOf(await eventsOf(w.t.h, wa));
    assert.deepEqual(
      cp?.changes.map((c) => [path.basename(c.path), c.tool]),
      [['wf.txt', 'write_file']],
    );
    assert.equal(checkpointsOf(w.root.session.events).length, 0, "not in the parent's log");
    // From the root, with its subtree: the workflow agent's file goes back too.
    const plan = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: await startOf(w.t.h, w.root.id), subtree: true });
    assert.deepEqual(
      plan.files.map((f) => f.relative),
      ['wf.txt'],
    );
    await w.t.h.checkpoints.apply(plan);
    assert.equal(read('wf.txt'), null);
  });
});
