import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { cliWorld } from '../support/cli';
import { arborBin } from '../support/cli-bundle';
import { until } from '../support/harness';

// Issue 20 point 1: SIGUSR1 makes Node open its inspector on 127.0.0.1:9229, and whatever can
// signal the process can then attach and run code in it. Neither `arbor run` nor `arbor acp`
// may open one. The control (a plain Node process) shows the probe sees an inspector when there is one.

const BIN = arborBin();

/** The TCP ports `pid` listens on, from /proc (no tool needed; independent of who else uses 9229). */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && f[3] === '0A' && inodes.has(f[9])) ports.push(Number.parseInt(f[1].split(':')[1], 16));
    }
  }
  return ports;
}

const alive = (p: ChildProcess) => p.exitCode === null && p.signalCode === null;

async function signalled(p: ChildProcess): Promise<number[]> {
  p.kill('SIGUSR1');
  await new Promise((r) => setTimeout(r, 1500));
  return listeningPorts(p.pid!);
}

describe('the CLI opens no inspector on SIGUSR1 (issue 20)', function () {
  this.timeout(60_000);
  const w = cliWorld('arbor-usr1-');
  const procs: ChildProcess[] = [];
  afterEach(() => {
    for (const p of procs.splice(0)) p.kill('SIGKILL');
  });
  const start = (file: string, args: string[]) => {
    const p = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ARBOR_API_KEY: '' } });
    procs.push(p);
    return p;
  };

  it('the control: a plain Node process listens on an inspector port after SIGUSR1', async () => {
    const p = start(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    await new Promise((r) => setTimeout(r, 500));
    assert.ok((await signalled(p)).length > 0, 'the probe sees the inspector');
  });

  it('arbor run, mid-turn: no inspector, and the run goes on to its answer', async () => {
    w.server.setFallback(() => ({ text: 'the answer', delayMs: 3000 }));
    const p = start(process.execPath, [BIN, 'run', ...w.common, 'hello']);
    let out = '';
    p.stdout!.on('data', (d) => (out += d));
    await until(() => w.server.requests.length > 0, 20_000);
    assert.deepEqual(await signalled(p), []);
    assert.ok(alive(p), 'SIGUSR1 did not end it either');
    const code = await new Promise<number | null>((r) => p.on('exit', (c) => r(c)));
    assert.equal(code, 0);
    assert.match(out, /the answer/);
  });

  it('arbor acp, waiting for its client: no inspector', async () => {
    const p = start(process.execPath, [BIN, 'acp', '--workspace', w.ws, '--store', w.store, '--base-url', w.server.baseURL]);
    let out = '';
    p.stdout!.on('data', (d) => (out += d));
    p.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } })}\n`);
    await until(() => out.includes('"id":1'), 20_000);
    assert.deepEqual(await signalled(p), []);
    assert.ok(alive(p), 'it still serves its client');
  });
});
