import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { blobId } from '../../../src/core/checkpoint/objects';
import type { CheckpointChange } from '../../../src/core/session/events';
import type { ScriptedToolCall } from '../../support/model-server';
import { ofType, subagentWorld } from '../subagent/helpers';
import { checkpointsOf, run, write } from './fixture';

// A model step whose calls run in parallel: a command and a file tool (or two commands) in the
// same root at the same moment, repeated many times so that every interleaving of the command's
// snapshots with the tool's atomic write (temp file, fsync, rename) comes up (decision 0070).
// Each round is a real agent turn against the scripted model server: a step with a no-op
// command (the root as the last snapshot saw it), then the racing step. What must hold every
// time: each call's changes recorded, against that call, with the right before and after —
// nothing lost, nothing extra (the tool's temp file is not a change of the command's). The
// checkpoints' trust slack is shortened, and each round waits it out, so that the racing
// command's first snapshot is the stat digest's shortcut (no git), as on a quiet workspace.

const ROUNDS = 50;
const SLACK = 60;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const blob = (text: string): string => blobId(Buffer.from(text, 'utf8'));
type Row = [file: string, tool: string, callId: string, before: string | null, after: string | null];
const rows = (changes: readonly CheckpointChange[]): Row[] =>
  changes.map((c): Row => [path.basename(c.path), c.tool, c.callId, c.before, c.after]).sort((a, b) => (a.join('\0') < b.join('\0') ? -1 : 1));

describe('checkpoints: the calls of one step in parallel, each change to its own call (decision 0070)', function () {
  this.timeout(240_000);
  const w = subagentWorld({ checkpoints: { trustSlackMs: SLACK } }, { perTest: true });
  const ws = () => fs.realpathSync(w.t.workspace);
  const read = (rel: string) => fs.readFileSync(path.join(ws(), rel), 'utf8');

  /** One turn: a no-op command, then `calls` in one step; the changes it recorded, in the order the log holds them, and where it started. */
  async function round(calls: ScriptedToolCall[]): Promise<{ changes: CheckpointChange[]; start: number }> {
    await sleep(SLACK + 40);
    const from = w.root.session.events.length;
    w.script.on('root', { toolCalls: [run('true')] }, { toolCalls: calls }, { text: 'done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const events = w.root.session.events.slice(from);
    const cps = checkpointsOf(events);
    assert.ok(
      cps.every((c) => !c.skipped?.length),
      `nothing is left out: ${JSON.stringify(cps.map((c) => c.skipped))}`,
    );
    return { changes: cps.flatMap((c) => c.changes), start: ofType(events, 'user/message')[0].seq };
  }

  afterEach(async function () {
    if (this.currentTest?.state !== 'passed') return;
    const counts = await w.t.h.checkpoints.snapshotCounts();
    assert.ok(counts.skipped >= ROUNDS, `the shortcut was taken (a command's first snapshot without git): ${JSON.stringify(counts)}`);
  });

  it(`a command and a write_file in one step: each records exactly its own changes (${ROUNDS} rounds)`, async () => {
    await w.setup();
    fs.writeFileSync(path.join(ws(), 'tracked.txt'), 't-000\n');
    for (let i = 1; i <= ROUNDS; i++) {
      const was = read('tracked.txt');
      const now = `t-${String(i).padStart(3, '0')}\n`; // the same size every round: only the content tells
      const { changes } = await round([
        { id: `cmd${i}`, ...run(`printf 'c${i}\\n' > cmd-${i}.txt && printf '${now.trim()}\\n' > tracked.txt`) },
        { id: `w${i}`, ...write(`w-${i}.txt`, `w${i}\n`) },
      ]);
      assert.deepEqual(
        rows(changes),
        rows([
          { path: `cmd-${i}.txt`, root: '', tool: 'run_command', callId: `cmd${i}`, before: null, after: blob(`c${i}\n`) },
          { path: 'tracked.txt', root: '', tool: 'run_command', callId: `cmd${i}`, before: blob(was), after: blob(now) },
          { path: `w-${i}.txt`, root: '', tool: 'write_file', callId: `w${i}`, before: null, after: blob(`w${i}\n`) },
        ]),
        `round ${i}`,
      );
    }
  });

  it(`a command that only touches a file's times records nothing; the write_file beside it records its file (${ROUNDS} rounds)`, async () => {
    await w.setup();
    fs.writeFileSync(path.join(ws(), 'touched.txt'), 'same\n');
    for (let i = 1; i <= ROUNDS; i++) {
      const { changes } = await round([
        { id: `cmd${i}`, ...run('touch touched.txt') },
        { id: `w${i}`, ...write(`w-${i}.txt`, `w${i}\n`) },
      ]);
      assert.deepEqual(rows(changes), [[`w-${i}.txt`, 'write_file', `w${i}`, null, blob(`w${i}\n`)]], `round ${i}`);
    }
  });

  it(`a command and a write_file of the same file: whichever wins, the record ends where the file is and rewinds to where it was (${ROUNDS} rounds)`, async () => {
    await w.setup();
    fs.writeFileSync(path.join(ws(), 'same.txt'), 'start\n');
    for (let i = 1; i <= ROUNDS; i++) {
      const was = read('same.txt');
      const { changes, start } = await round([
        { id: `cmd${i}`, ...run(`printf 'cmd${i}\\n' > same.txt`) },
        { id: `w${i}`, ...write('same.txt', `tool${i}\n`) },
      ]);
      const now = read('same.txt');
      const by: Record<string, string> = { [blob(`cmd${i}\n`)]: 'run_command', [blob(`tool${i}\n`)]: 'write_file' };
      for (const c of changes) {
        assert.equal(path.basename(c.path), 'same.txt', `round ${i}: only the shared file changed`);
        assert.equal(
          c.after === null ? undefined : by[c.after],
          c.tool,
          `round ${i}: each content is attributed to the call that wrote it: ${JSON.stringify(rows(changes))}`,
        );
      }
      assert.ok(
        changes.some((c) => c.tool === 'write_file' && c.after === blob(`tool${i}\n`)),
        `round ${i}: the write_file's change is there: ${JSON.stringify(rows(changes))}`,
      );
      if (now === `cmd${i}\n`)
        assert.ok(
          changes.some((c) => c.tool === 'run_command'),
          `round ${i}: the command's write is the file now, so it is recorded`,
        );
      assert.equal(changes[0].before, blob(was), `round ${i}: the first change starts where the file was: ${JSON.stringify(rows(changes))}`);
      assert.equal(changes[changes.length - 1].after, blob(now), `round ${i}: the last change ends where the file is: ${JSON.stringify(rows(changes))}`);
      const plan = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: start });
      assert.deepEqual(
        plan.files.map((f) => [f.relative, f.restore, f.conflict?.reason]),
        [['same.txt', blob(was), undefined]],
        `round ${i}: a rewind of the round restores the file, no conflict`,
      );
    }
  });

  it(`two commands and a write_file in one step: each command's own changes are its, nothing is lost, nothing else appears (${ROUNDS} rounds)`, async () => {
    await w.setup();
    for (let i = 1; i <= ROUNDS; i++) {
      const { changes, start } = await round([
        { id: `a${i}`, ...run(`printf 'a${i}\\n' > a-${i}.txt`) },
        { id: `b${i}`, ...run(`printf 'b${i}\\n' > b-${i}.txt`) },
        { id: `w${i}`, ...write(`w-${i}.txt`, `w${i}\n`) },
      ]);
      const own: Row[] = [
        [`a-${i}.txt`, 'run_command', `a${i}`, null, blob(`a${i}\n`)],
        [`b-${i}.txt`, 'run_command', `b${i}`, null, blob(`b${i}\n`)],
        [`w-${i}.txt`, 'write_file', `w${i}`, null, blob(`w${i}\n`)],
      ];
      const got = rows(changes);
      for (const r of own) {
        assert.ok(
          got.some((g) => g.join('\0') === r.join('\0')),
          `round ${i}: ${r[0]} is recorded against ${r[2]}: ${JSON.stringify(got)}`,
        );
      }
      // Two commands in one root share it: one's snapshots may also see what the other wrote
      // meanwhile (decision 0059), ending where the other's did, or where the other's was part
      // way (`>` makes the file empty before printf writes it: a snapshot between the two sees it
      // empty; the writer's own change then ends where the file is); never a file no call wrote,
      // never the file tool's.
      const EMPTY = blob('');
      for (const g of got) {
        assert.ok(
          own.some(
            (r) =>
              r[0] === g[0] &&
              (r[1] === 'run_command' ? g[1] === 'run_command' && (r[4] === g[4] || (g[2] !== r[2] && g[4] === EMPTY)) : g[2] === r[2] && r[4] === g[4]),
          ),
          `round ${i}: ${JSON.stringify(g)} is a change a call of the step made`,
        );
      }
      // Each file's last change ends where the file is.
      for (const r of own) assert.equal(got.filter((g) => g[0] === r[0]).at(-1)?.[4], r[4], `round ${i}: ${r[0]} ends where it is: ${JSON.stringify(got)}`);
      const plan = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: start });
      assert.deepEqual(
        plan.files.map((f) => [f.relative, f.restore, f.conflict?.reason]),
        [`a-${i}.txt`, `b-${i}.txt`, `w-${i}.txt`].map((f) => [f, null, undefined]),
        `round ${i}: a rewind of the round removes the three files, no conflict: ${JSON.stringify(got)}`,
      );
    }
  });
});
