import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RewindError } from '../../../src/core/checkpoint/plan';
import type { CheckpointChange } from '../../../src/core/session/events';
import { ok } from '../../../src/core/tools/result';
import { commandEntering, withCommandsOut } from '../../../src/core/tools/roots-lock';
import { eventsOf, subagentWorld, waitFor } from '../subagent/helpers';
import { checkpointsOf, run, startOf, write } from './fixture';

// A rewind while another agent's command runs in the same workspace (decision 0059, amended in
// s50). A command is recorded as the difference of its roots before and after it: a rewind
// written inside that window was recorded as the command's own change — so a later rewind of the
// command's turn undid the user's rewind without a word — and a file the command wrote between
// the rewind's check and its write was overwritten with no conflict shown. A rewind now refuses
// while a command runs in a root holding one of its files (saying what to do), and a command
// asked for while a rewind writes there waits for it.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const isBusy = (e: unknown): e is RewindError => e instanceof RewindError && e.code === 'BUSY';

describe('rewind: a command of another agent running in the same roots', function () {
  this.timeout(120_000);
  const w = subagentWorld({}, { gates: false });
  const ws = () => fs.realpathSync(w.t.workspace);
  const at = (rel: string) => path.join(ws(), rel);
  const read = (rel: string) => fs.readFileSync(at(rel), 'utf8');
  const ownChanges = async (id: string): Promise<string[]> =>
    checkpointsOf(await eventsOf(w.t.h, id))
      .flatMap((c) => c.changes)
      .map((c: CheckpointChange) => path.relative(ws(), c.path))
      .sort();
  const planOf = async (id: string) => w.t.h.checkpoints.plan({ sessionId: id, toSeq: await startOf(w.t.h, id) });
  type Session = Awaited<ReturnType<typeof w.t.h.createSession>>;

  /** The root writes f.txt in a turn: the plan of a rewind of that turn. */
  async function rewindOfWrite(): Promise<Awaited<ReturnType<typeof planOf>>> {
    w.script.on('a', { toolCalls: [write('f.txt', 'from a\n')] }, { text: 'done' });
    await w.root.accept('[[a]] go');
    await w.t.h.settle();
    return planOf(w.root.id);
  }

  /** Another session runs `command` (touching `started` first); `plan` is applied while it runs: that session, and what the apply threw. */
  async function applyWhileRunning(plan: Awaited<ReturnType<typeof planOf>>, command: string): Promise<{ b: Session; first: unknown }> {
    const b = await w.t.h.createSession();
    w.script.on('b', { toolCalls: [run(command)] }, { text: 'done' });
    const turn = b.accept('[[b]] go');
    await waitFor(() => fs.existsSync(at('started')), 'the command to start');
    const first = await w.t.h.checkpoints.apply(plan).then(
      () => undefined,
      (e: unknown) => e,
    );
    await turn;
    await w.t.h.settle();
    return { b, first };
  }

  /** Another session asked to run `command` while a rewind holds f.txt's roots, doing `during` meanwhile: that session and its turn. */
  async function askedWhileRewinding(
    command: string,
    during: (b: Session, turn: Promise<unknown>) => Promise<void>,
  ): Promise<{ b: Session; turn: Promise<unknown> }> {
    const b = await w.t.h.createSession();
    w.script.on('b', { toolCalls: [run(command)] }, { text: 'done' });
    let turn!: Promise<unknown>;
    // What a rewind does (its files' writer, refusing commands under way).
    await withCommandsOut(
      [at('f.txt')],
      (busy) => new Error(`busy: ${busy.length}`),
      async () => {
        turn = b.accept('[[b]] go');
        await during(b, turn);
      },
    );
    return { b, turn };
  }

  it("attack: a rewind applied while a command sleeps is refused, never recorded as the command's change", async () => {
    const plan = await rewindOfWrite();
    assert.deepEqual(
      plan.files.map((f) => f.relative),
      ['f.txt'],
    );

    const { b, first } = await applyWhileRunning(plan, 'touch started; sleep 2; echo x > out.txt');

    assert.deepEqual(await ownChanges(b.id), ['out.txt', 'started'], "the command's record holds only what it wrote");
    const bPlan = await planOf(b.id);
    assert.deepEqual(bPlan.files.map((f) => f.relative).sort(), ['out.txt', 'started'], "a rewind of the command's turn leaves f.txt alone");
    assert.ok(isBusy(first), `the rewind was refused while the command ran: ${String(first)}`);
    assert.match(first.message, /Nothing was changed: .*sleep 2; echo x > out\.txt.* Wait for it to end \(or stop that agent\), then apply the rewind again\./);
    assert.equal(read('f.txt'), 'from a\n', 'the refused rewind wrote nothing');

    // Once the command has ended, the same rewind goes through.
    const out = await w.t.h.checkpoints.apply(plan);
    assert.deepEqual(out.restored, [at('f.txt')]);
    assert.equal(fs.existsSync(at('f.txt')), false);
  });

  it("attack: a command writing a rewind's file between its check and its write is never overwritten unseen", async () => {
    // 300 files of 64 KiB in one folder: the rewind checks them all, writes their temp files, then
    // fsyncs them (a while) before it renames any. A temp file seen means every file was checked.
    fs.mkdirSync(at('many'));
    for (let i = 0; i < 300; i++) fs.writeFileSync(at(`many/${String(i).padStart(3, '0')}.txt`), `v0 ${'x'.repeat(65536)}\n`);
    fs.writeFileSync(at('many/f.txt'), 'v0\n');
    w.script.on('a', { toolCalls: [run('for f in many/*.txt; do echo v1 > "$f"; done')] }, { text: 'done' });
    await w.root.accept('[[a]] go');
    await w.t.h.settle();
    const plan = await planOf(w.root.id);
    assert.equal(plan.files.length, 301);
    assert.ok(plan.files.every((f) => !f.conflict));

    const { first } = await applyWhileRunning(
      plan,
      'touch started; for i in $(seq 100); do ls -a many | grep -q arbor-tmp && break; sleep 0.01; done; echo cmd > many/f.txt',
    );

    assert.equal(read('many/f.txt'), 'cmd\n', "the command's output stands (the rewind did not say it would overwrite it)");
    assert.ok(isBusy(first), `the rewind was refused while the command ran: ${String(first)}`);
    // Asked again, the rewind sees the command's write as a conflict: the human chooses.
    const again = await planOf(w.root.id);
    assert.equal(again.files.find((f) => f.relative === 'many/f.txt')?.conflict?.reason, 'edited-since'); // (b is no node of a's conversation)
  });

  it('a command asked for while a rewind writes in its roots waits for it; its record holds only its own change', async () => {
    // Here a slow rewind.
    const { b, turn } = await askedWhileRewinding('touch started; sleep 1; echo x > out.txt', async () => {
      await sleep(600);
      fs.writeFileSync(at('f.txt'), 'written by the rewind\n');
      assert.equal(fs.existsSync(at('started')), false, 'the command has not started while the rewind writes');
    });
    await turn;
    await w.t.h.settle();
    assert.deepEqual(await ownChanges(b.id), ['out.txt', 'started']);
  });

  it('Stop while a command waits for a rewind: the command never runs, and counts as running nowhere', async () => {
    await askedWhileRewinding('touch started', async (b, turn) => {
      await sleep(400);
      await b.cancel();
      await turn;
    });
    await w.t.h.settle();
    await sleep(300);
    assert.equal(fs.existsSync(at('started')), false, 'the stopped command did not run once the rewind ended');
    assert.equal(
      await withCommandsOut(
        [at('f.txt')],
        (busy) => new Error(`left counted as running: ${busy.length}`),
        async () => 'free',
      ),
      'free',
    );
  });

  it('a command in another root holds nothing up: the rewind goes through', async () => {
    const other = fs.realpathSync(fs.mkdtempSync(path.join(path.dirname(ws()), 'other-')));
    const plan = await rewindOfWrite();
    // A command somewhere else (another root, a worktree) under way: the lock's own entry, as the recorder makes it.
    const leave = await commandEntering({ who: 'elsewhere', command: 'sleep 60', roots: [other] });
    try {
      const out = await w.t.h.checkpoints.apply(plan);
      assert.deepEqual(out.restored, [at('f.txt')]);
    } finally {
      leave?.();
    }
  });

  it("a rewind asked for from a tool of a turn beside the turn's own command is refused, not waited on (no deadlock)", async () => {
    const plan = await rewindOfWrite();
    const answers: string[] = [];
    w.t.h.tools.register({
      name: 'rewind_now',
      description: 'test: applies the plan',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      execute: async () => {
        await waitFor(() => fs.existsSync(at('started')), 'the command beside it to start');
        const r = await w.t.h.checkpoints.apply(plan).then(
          (o) => `restored ${o.restored.length}`,
          (e: unknown) => (isBusy(e) ? 'BUSY' : String(e)),
        );
        answers.push(r);
        return ok(r);
      },
    });
    const c = await w.t.h.createSession();
    w.script.on('c', { toolCalls: [run('touch started; sleep 1'), { name: 'rewind_now', arguments: {} }] }, { text: 'done' });
    await c.accept('[[c]] go');
    await w.t.h.settle();
    assert.deepEqual(answers, ['BUSY']);
    assert.equal(read('f.txt'), 'from a\n');
  });
});
