import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { readStat } from '../../../src/core/process/proc-stat';
import { killGroupAndStrays } from '../../../src/core/process/strays';
import { runInGroup } from '../../../src/core/tools/command-process';

// killGroupAndStrays is what stops a lost spawner's programs and what the spawner still runs when
// its host dies (decision 0095, 0099 amended): one SIGKILL, no second look. A program that keeps
// forking helpers which leave its group (`setsid`) is the worst case: a helper forked between the
// naming of the strays and the group's kill would escape both. The group is frozen first.

/** Live (not zombie) processes whose command line (NUL between its words) holds `needle`. */
function living(needle: string): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readStat(Number(d))?.state === 'Z') continue;
      if (fs.readFileSync(`/proc/${d}/cmdline`, 'latin1').includes(needle)) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

describe('killGroupAndStrays: a program forking setsid helpers as it is killed', () => {
  it('leaves none of them running, however fast it forks', async function () {
    if (process.platform !== 'linux') this.skip();
    this.timeout(60_000);
    for (let round = 0; round < 5; round++) {
      const marker = `73.${process.pid}${round}`; // a number: sleep takes it as its seconds
      const needle = `sleep\0${marker}`;
      // A shell that starts a setsid'd sleep, over and over, as fast as it can.
      const sh = spawn('/bin/sh', ['-c', `while :; do setsid sleep ${marker} & done`], { detached: true, stdio: 'ignore' });
      try {
        for (let i = 0; i < 500 && living(needle).length < 20; i++) await new Promise((r) => setTimeout(r, 5));
        assert.ok(living(needle).length >= 20, 'helpers are being started');
        killGroupAndStrays(sh.pid!);
        await new Promise((r) => setTimeout(r, 300));
        const left = living(needle);
        assert.deepEqual(left, [], `round ${round}: helpers escaped the kill`);
      } finally {
        for (const p of living(needle)) process.kill(p, 'SIGKILL');
        try {
          process.kill(-sh.pid!, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
  });

  it('a stopped command that ignores SIGTERM and keeps forking them: the SIGKILL follow-up leaves none running', async function () {
    if (process.platform !== 'linux') this.skip();
    this.timeout(60_000);
    for (let round = 0; round < 3; round++) {
      const marker = `74.${process.pid}${round}`;
      const needle = `sleep\0${marker}`;
      const abort = new AbortController();
      const run = runInGroup(
        {
          file: '/bin/sh',
          args: ['-c', `trap '' TERM; while :; do setsid sleep ${marker} & done`],
          command: '',
          cwd: '/',
          env: process.env,
          namespaced: false,
        },
        { timeoutMs: 60_000, cap: 1e6, killGraceMs: 100, lingerMs: 100 },
        abort.signal,
      );
      try {
        for (let i = 0; i < 500 && living(needle).length < 20; i++) await new Promise((r) => setTimeout(r, 5));
        assert.ok(living(needle).length >= 20, 'helpers are being started');
        abort.abort();
        const out = await run;
        assert.equal(out.end, 'aborted');
        await new Promise((r) => setTimeout(r, 300));
        assert.deepEqual(living(needle), [], `round ${round}: helpers escaped the stop`);
      } finally {
        for (const p of living(needle)) process.kill(p, 'SIGKILL');
      }
    }
  });
});
