import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { acquireLock } from '../../../src/core/store/lock';
import { parseOwner } from '../../../src/core/store/lock-owner';
import { tempDir } from '../../support/store-fixtures';

// A VS Code window and the CLI opening one workspace's store at the same moment, after a
// crash left a stale arbor.lock: both see a dead owner and take over. Exactly one may win;
// the other must get LOCKED naming the winner (decision 0019).

const LOCK_MODULE = path.join(__dirname, '..', '..', '..', 'src', 'core', 'store', 'lock');

/** A pid that no process has: one that just exited. */
async function deadPid(): Promise<number> {
  const p = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => p.on('close', resolve));
  return p.pid!;
}

interface Outcome {
  pid: number;
  line: string;
}

/**
 * Spawn one contender: it waits for `startAt` (wall clock), tries to take the lock, reports, and
 * holds what it got until `release` resolves (then exits holding it, as a killed Arbor does). Held
 * until both have answered, not for a fixed while: on a loaded machine a contender can start late,
 * and one that tried after the other had exited would rightly take over a stale lock.
 */
function contender(dir: string, startAt: number, answered: (line: string) => void, release: Promise<void>): Promise<Outcome> {
  const script = `
    const { acquireLock } = require(${JSON.stringify(LOCK_MODULE)});
    while (Date.now() < ${startAt}) {} // line up with the other contender
    acquireLock(${JSON.stringify(dir)}).then(() => 'won', (e) => (e.code || 'ERROR') + ' ' + e.message).then((line) => {
      process.stdout.write(line + '\\n');
      process.stdin.on('data', () => {}).on('end', () => process.exit(0)); // hold it while the other one looks
    });`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('\n')) answered(out.trim());
    });
    void release.then(() => child.stdin.end());
    child.on('error', reject);
    child.on('close', () => resolve({ pid: child.pid!, line: out.trim() }));
  });
}

/** Both contenders of one race, each holding until both have answered. */
function race(dir: string, startAt: number): Promise<Outcome[]> {
  let left = 2;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const answered = () => {
    if (--left === 0) release();
  };
  // Bounded: a contender that never answers is let go after 60 s (its line then tells).
  const bound = setTimeout(release, 60_000);
  return Promise.all([contender(dir, startAt, answered, released), contender(dir, startAt, answered, released)]).finally(() => clearTimeout(bound));
}

describe('store lock: two processes taking over the same stale lock', () => {
  it('never both win: one holds the lock, the other gets LOCKED naming its pid (raced 24 times)', async function () {
    this.timeout(120_000);
    const rounds = 24;
    const parallel = 3;
    const failures: string[] = [];
    for (let r = 0; r < rounds; r += parallel) {
      await Promise.all(
        Array.from({ length: Math.min(parallel, rounds - r) }, async () => {
          const tmp = tempDir('arbor-lock-race-');
          try {
            fs.writeFileSync(path.join(tmp.dir, 'arbor.lock'), String(await deadPid()));
            const startAt = Date.now() + 700; // both processes are up by then
            const [a, b] = await race(tmp.dir, startAt);
            const winners = [a, b].filter((o) => o.line === 'won');
            if (winners.length !== 1) {
              failures.push(`${winners.length} winners: ${a.pid} "${a.line}", ${b.pid} "${b.line}"`);
              return;
            }
            const loser = winners[0] === a ? b : a;
            const expected = new RegExp(`^LOCKED The store at .* is in use by process ${winners[0].pid}\\. Close that Arbor`);
            if (!expected.test(loser.line)) failures.push(`loser ${loser.pid} said "${loser.line}" (winner ${winners[0].pid})`);
            // The winner exited holding the lock, as a killed Arbor does: its lock and the token it names stay.
            const winnerToken = parseOwner(fs.readFileSync(path.join(tmp.dir, 'arbor.lock'), 'utf8'))?.live;
            const litter = fs.readdirSync(tmp.dir).filter((f) => f !== 'arbor.lock' && f !== winnerToken);
            if (litter.length > 0) failures.push(`left behind: ${litter.join(', ')}`);
          } finally {
            tmp.remove();
          }
        }),
      );
    }
    assert.deepEqual(failures, [], `${failures.length} of ${rounds} races went wrong`);
  });

  it('a takeover whose holder died (a guard left behind) does not block the next one, which cleans up', async () => {
    const tmp = tempDir('arbor-lock-guard-');
    try {
      const stale = await deadPid();
      fs.writeFileSync(path.join(tmp.dir, 'arbor.lock'), String(stale));
      fs.writeFileSync(path.join(tmp.dir, `arbor.lock.takeover-${stale}`), String(await deadPid()));
      const release = await acquireLock(tmp.dir);
      assert.equal(parseOwner(fs.readFileSync(path.join(tmp.dir, 'arbor.lock'), 'utf8'))?.pid, process.pid);
      const token = parseOwner(fs.readFileSync(path.join(tmp.dir, 'arbor.lock'), 'utf8'))?.live;
      assert.deepEqual(fs.readdirSync(tmp.dir).sort(), ['arbor.lock', ...(token ? [token] : [])].sort(), 'the guard is gone; the lock and its token are all');
      release();
      assert.deepEqual(fs.readdirSync(tmp.dir), []);
    } finally {
      tmp.remove();
    }
  });

  it('an empty lock file (a writer killed before writing its pid) is taken over', async () => {
    const tmp = tempDir('arbor-lock-empty-');
    try {
      fs.writeFileSync(path.join(tmp.dir, 'arbor.lock'), '');
      const release = await acquireLock(tmp.dir);
      assert.equal(parseOwner(fs.readFileSync(path.join(tmp.dir, 'arbor.lock'), 'utf8'))?.pid, process.pid);
      release();
    } finally {
      tmp.remove();
    }
  });
});
