// An apply while an agent's command runs in the workspace (decisions 0059 and 0060, amended in
// s50). The command is recorded as the difference of its roots before and after it: the apply's
// files, written inside that window, were recorded as the command's change (a later rewind of its
// turn took the applied work back out without a word), and a file the command wrote between the
// apply's check and its write was overwritten with no conflict. An apply now refuses while a
// command runs in the workspace it writes (saying what to do); a command in a child's own worktree
// holds nothing up.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { WorktreeError } from '../../../src/core/worktree/git';
import { checkpointsOf, startOf } from '../checkpoint/fixture';
import { eventsOf, waitFor } from '../subagent/helpers';
import { read, worktreeWorld } from './fixture';

const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }] });
const isBusy = (e: unknown): e is WorktreeError => e instanceof WorktreeError && e.code === 'BUSY';

describe('worktree apply: a command running in the workspace', function () {
  this.timeout(120_000);
  const w = worktreeWorld();
  const at = (rel: string) => path.join(w.ws, rel);
  const changedBy = async (id: string): Promise<string[]> =>
    checkpointsOf(await eventsOf(w.t.h, id))
      .flatMap((c) => c.changes)
      .map((c) => path.relative(w.ws, c.path))
      .sort();

  async function child(label: string, ...steps: ReturnType<typeof call>[]): Promise<string> {
    w.script.on(label, ...steps, { text: 'done' });
    const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: `[[${label}]] work`, label, isolation: 'worktree' });
    await run.result;
    await run.dispose();
    return run.id;
  }

  /** The parent runs `command` (touching `started` first); child `id` is applied while it runs: what the apply answered or threw. */
  async function applyWhileParentRuns(id: string, command: string): Promise<unknown> {
    w.script.on('p', call('run_command', { command }), { text: 'done' });
    const turn = w.root.accept('[[p]] go');
    await waitFor(() => fs.existsSync(at('started')), 'the command to start');
    const first = await w.t.h.worktrees.apply(id).then(
      (r) => r,
      (e: unknown) => e,
    );
    await turn;
    await w.t.h.settle();
    return first;
  }

  it("attack: an apply while a command sleeps is refused, never recorded as the command's change", async () => {
    const id = await child('c', call('write_file', { path: 'd.txt', content: 'from the child\n' }));
    const first = await applyWhileParentRuns(id, 'touch started; sleep 2; echo x > out.txt');

    // The parent's log: its command's record holds only what the command wrote.
    assert.deepEqual(
      (await changedBy(w.root.id)).filter((p) => !p.startsWith('.arbor')),
      ['out.txt', 'started'],
    );
    const plan = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: await startOf(w.t.h, w.root.id) });
    assert.ok(!plan.files.some((f) => f.relative === 'd.txt'), "a rewind of the parent's turn leaves the applied file alone");
    assert.ok(isBusy(first), `the apply was refused while the command ran: ${JSON.stringify(first)}`);
    assert.match(first.message, /Nothing was applied: .*sleep 2; echo x > out\.txt.* Wait for it to end \(or stop that agent\), then apply again\./);
    assert.equal(fs.existsSync(at('d.txt')), false, 'the refused apply wrote nothing');
    assert.equal((await w.t.h.worktrees.list())[0].state, 'open');

    const r = await w.t.h.worktrees.apply(id);
    assert.equal(r.applied, true);
    assert.equal(read(at('d.txt')), 'from the child\n');
  });

  it("attack: a command writing an apply's file between its check and its write is never overwritten unseen", async () => {
    // 60 files written one by one (each fsynced) before z.txt: once d/01.txt is there, every target was checked.
    const id = await child('c', call('run_command', { command: 'mkdir d; for i in $(seq -w 1 60); do echo child > d/$i.txt; done; echo child > z.txt' }));
    const first = await applyWhileParentRuns(id, 'touch started; for i in $(seq 200); do [ -e d/01.txt ] && break; sleep 0.01; done; echo cmd > z.txt');

    assert.equal(read(at('z.txt')), 'cmd\n', `the command's output stands (the apply said: ${JSON.stringify(first)})`);
    assert.ok(isBusy(first), `the apply was refused while the command ran: ${JSON.stringify(first)}`);
    // Asked again, the apply sees the command's file as a conflict: nothing is overwritten.
    const again = await w.t.h.worktrees.apply(id);
    assert.equal(again.applied, false);
    assert.match(JSON.stringify(again), /z\.txt/);
    assert.equal(read(at('z.txt')), 'cmd\n');
  });

  it("a command in another child's worktree holds nothing up: the apply goes through", async () => {
    const id = await child('c', call('write_file', { path: 'd.txt', content: 'from the child\n' }));
    w.script.on('busy', call('run_command', { command: 'touch started; sleep 2' }), { text: 'done' });
    const busy = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[busy]] work', label: 'busy', isolation: 'worktree' });
    for (let i = 0; ; i++) {
      const place = (await w.t.h.worktrees.list()).find((l) => l.id === busy.id)?.path;
      if (place && fs.existsSync(path.join(place, 'started'))) break;
      if (i > 2000) throw new Error("the other child's command never started");
      await new Promise((r) => setTimeout(r, 10));
    }
    const r = await w.t.h.worktrees.apply(id);
    assert.equal(r.applied, true);
    assert.equal(read(at('d.txt')), 'from the child\n');
    await busy.result;
    await busy.dispose();
  });
});
