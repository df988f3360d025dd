import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { groupHasLiveMember, RemoteProcess } from '../../../src/core/remote/process';

/** The zombie child of `ppid`, if it has one yet (scanning /proc). */
function zombieChildOf(ppid: number): number | undefined {
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const [state, parent] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z' && Number(parent) === ppid) return Number(d);
    } catch {
      // gone
    }
  }
  return undefined;
}

describe('remote: a process group that holds only zombies is gone', function () {
  this.timeout(20_000);

  it('signal 0 still finds a group whose one member is a zombie; groupHasLiveMember does not', async () => {
    // The zombie leads a session (and group) of its own; its parent execs `sleep` and never reaps it,
    // as an init that reaps late (a container's, a micro-VM's) leaves a killed program's helpers.
    const parent = spawn('sh', ['-c', 'setsid sh -c "exit 0" & exec sleep 10'], { stdio: 'ignore' });
    try {
      let zombie: number | undefined;
      for (let i = 0; i < 200 && zombie === undefined; i++) {
        zombie = zombieChildOf(parent.pid!);
        if (zombie === undefined) await new Promise((r) => setTimeout(r, 10));
      }
      assert.ok(zombie, 'the zombie appeared');
      assert.doesNotThrow(() => process.kill(-zombie, 0), 'signal 0 reaches the group of a zombie');
      assert.equal(groupHasLiveMember(zombie), false);
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it('a running group is alive until stopped, then gone', async () => {
    const p = new RemoteProcess({ command: 'sleep', args: ['10'], cwd: process.cwd(), env: { PATH: process.env.PATH ?? '' }, graceMs: 500 });
    assert.equal(p.groupAlive(), true);
    assert.equal(groupHasLiveMember(p.pid!), true);
    await p.stop();
    assert.equal(p.groupAlive(), false);
  });
});
