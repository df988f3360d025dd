import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Session } from '../../../src/core/session/session';
import { checkEventShape } from '../../../src/core/session/validate';
import { Store, scanJournal } from '../../../src/core/store';
import { CRASH_SESSIONS, childHeader, eventAt, prng, restoreFiles, rootHeader, snapshotFiles, tempDir } from '../../support/store-fixtures';

// DESIGN §3: "survive kill -9 at any instant: after reopening, every acknowledged event is
// there and no event is half there". A child process appends as fast as it can to three
// sessions in two tree files (with checkpoints every 64 KiB, so kills also land inside
// checkpoints) and reports each acknowledged append; it is killed at a random instant and
// the folder is checked, trial after trial, on one growing store.

const WRITER = path.join(__dirname, '..', '..', 'support', 'crash-writer.js');
const TRIALS = 50;
const CHECKPOINT_BYTES = 64 * 1024;

interface Kill {
  /** Highest acknowledged seq per session. */
  acked: Map<string, number>;
  acks: number;
}

/** Run the writer until it has acknowledged something, let it run 20–400 ms more, SIGKILL it. */
function runAndKill(dir: string, seed: number, killAfterMs: number): Promise<Kill> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [WRITER, dir, '--checkpoint-bytes', String(CHECKPOINT_BYTES), '--pause-ms', '30', '--checkpoint-ms', '100', '--seed', String(seed)],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const acked = new Map<string, number>();
    let acks = 0;
    let killed = false;
    let partial = '';
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => (stderr += d));
    child.stdout.on('data', (d: string) => {
      const lines = (partial + d).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const m = /^ack (\S+) (\d+)$/.exec(line);
        if (!m) continue;
        const seq = Number(m[2]);
        if (seq > (acked.get(m[1]) ?? -1)) acked.set(m[1], seq);
        if (acks++ === 0) setTimeout(() => ((killed = true), child.kill('SIGKILL')), killAfterMs);
      }
    });
    child.on('error', reject);
    // 'close' comes after stdout has ended: every ack the writer wrote has been read.
    child.on('close', (code, signal) => {
      if (killed && signal === 'SIGKILL') resolve({ acked, acks });
      else reject(new Error(`the writer stopped on its own (code ${code}, signal ${signal}) before it was killed:\n${stderr}`));
    });
  });
}

/** Expected JSON of (session, seq), computed once per event across all trials. */
const expectedJson = new Map<string, string>();
function expected(session: string, seq: number): string {
  const key = `${session}/${seq}`;
  let json = expectedJson.get(key);
  if (json === undefined) expectedJson.set(key, (json = JSON.stringify(eventAt(session, seq))));
  return json;
}

describe('store: kill -9 at any instant (DESIGN §3)', function () {
  this.timeout(180_000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir('arbor-crash-')));
  afterEach(() => tmp.remove());

  it(`keeps every acknowledged event, whole and in order, across ${TRIALS} kills of a writer`, async () => {
    const seed = Number(process.env.ARBOR_CRASH_SEED ?? Date.now() % 1_000_000);
    const rnd = prng(seed);
    const started = Date.now();
    let totalAcks = 0;
    let losses = 0;
    let tornTails = 0;
    let midCheckpoint = 0;
    const ackedEver = new Map<string, number>();
    let stored = new Map<string, number>();

    for (let trial = 1; trial <= TRIALS; trial++) {
      const where = `trial ${trial} (ARBOR_CRASH_SEED=${seed})`;
      const kill = await runAndKill(tmp.dir, Math.floor(rnd() * 2 ** 31), 20 + Math.floor(rnd() * 381));
      totalAcks += kill.acks;
      for (const [id, seq] of kill.acked) ackedEver.set(id, Math.max(ackedEver.get(id) ?? -1, seq));

      // What the kill left behind: a checkpoint's temp file, journals ending in a torn record.
      const trees = path.join(tmp.dir, 'trees');
      if (fs.readdirSync(trees).some((f) => f.includes('.tmp-'))) midCheckpoint++;
      for (const wal of [
        path.join(tmp.dir, 'catalog.wal'),
        ...fs
          .readdirSync(trees)
          .filter((f) => f.endsWith('.wal'))
          .map((f) => path.join(trees, f)),
      ]) {
        if (fs.existsSync(wal) && scanJournal(fs.readFileSync(wal)).tail !== 'clean') tornTails++;
      }
      // Every other trial the folder is put back as the kill left it after checking, so the
      // next writer recovers from the raw crash state and replays journals of two runs.
      const asKilled = trial % 2 === 0 ? snapshotFiles(tmp.dir) : undefined;

      const store = await Store.open(tmp.dir, { checkpointBytes: CHECKPOINT_BYTES });
      try {
        assert.deepEqual(store.problems, [], `${where}: a kill must never look like corruption`);
        const [root, child, other] = CRASH_SESSIONS;
        assert.deepEqual(
          store.list().sort((a, b) => a.id.localeCompare(b.id)),
          [rootHeader(root), childHeader(child, root), rootHeader(other)].sort((a, b) => a.id.localeCompare(b.id)),
          `${where}: the sessions and their headers`,
        );
        const now = new Map<string, number>();
        for (const id of CRASH_SESSIONS) {
          const events = await store.readEvents(id);
          const acked = ackedEver.get(id) ?? -1;
          if (events.length <= acked) losses += acked + 1 - events.length;
          assert.ok(events.length > acked, `${where}: ${id} holds ${events.length} events but seq ${acked} was acknowledged`);
          assert.ok(events.length >= (stored.get(id) ?? 0), `${where}: ${id} shrank from ${stored.get(id)} to ${events.length} events`);
          assert.equal(await store.length(id), events.length, `${where}: length(${id})`);
          for (let seq = 0; seq < events.length; seq++) {
            checkEventShape(events[seq], seq); // contiguous from 0, every field whole
            if (JSON.stringify(events[seq]) !== expected(id, seq)) assert.fail(`${where}: ${id} seq ${seq} is not the event that was appended`);
          }
          const session = Session.restore(store.header(id)!, events); // full validation, turn rules included
          assert.equal(session.length, events.length);
          assert.equal((await store.inspect(id)).length, events.length);
          now.set(id, events.length);
        }
        stored = now;
      } finally {
        await store.close();
      }
      if (asKilled) restoreFiles(tmp.dir, asKilled);
      assert.equal(losses, 0, `${where}: acknowledged events were lost`);
    }

    const events = [...stored.values()].reduce((a, b) => a + b, 0);
    console.log(
      `      crash test: ${TRIALS} trials, ${totalAcks} acknowledged appends, ${events} events stored, ${losses} lost, ` +
        `${tornTails} torn journal tails, ${midCheckpoint} kills mid-checkpoint, ${((Date.now() - started) / 1000).toFixed(1)} s (ARBOR_CRASH_SEED=${seed})`,
    );
    assert.equal(losses, 0);
  });
});
