import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { RESTRICTED_CEILING } from '../../../src/core/policy/sandbox';
import { type Confinement, scriptConfinement } from '../../../src/core/workflow/confine';
import { permissionFlags, startProcess, treeRssKb } from '../../../src/core/workflow/isolate';
import { until } from '../../support/harness';
import { workflowWorld } from './helpers';

/** The folder this checkout's build lives in (out/test/core/workflow is four below it). */
const CHECKOUT = path.resolve(__dirname, '..', '..', '..', '..') + path.sep;

// Issue 20 point 1, defence in depth: assume a script *did* escape its `vm` context. What it
// then holds is the script process's own `process`, so the attack below is a raw Node
// script run exactly as the script process is run (same bubblewrap arguments, same
// permission flags, empty environment), reporting over the same IPC pipe. Each move must fail.
// The same attack run unconfined is the control: it shows every probe can succeed, so a pass
// means the confinement held, not that the probe was blind.
const ATTACK = `
const net = require('node:net');
const fs = require('node:fs');
const out = {};
const settle = (p, ms = 3000) => Promise.race([p, new Promise((r) => setTimeout(() => r('timeout'), ms))]);
const tcp = (port) => new Promise((res) => { const s = net.connect(port, '127.0.0.1'); s.on('connect', () => { s.write('hello from the script'); s.end(); res('connected'); }); s.on('error', (e) => res('error ' + e.code)); });
const unix = (p) => new Promise((res) => { const s = net.connect(p); s.on('connect', () => { s.write('hello'); s.end(); res('connected'); }); s.on('error', (e) => res('error ' + e.code)); });
const kill = (pid, sig) => { try { process.kill(pid, sig); return 'sent'; } catch (e) { return 'error ' + e.code; } };
const read = (p) => { try { fs.readdirSync(p); return 'read'; } catch (e) { return 'error ' + (e.code || e.message); } };
process.on('message', async (m) => {
  out.tcp = await settle(tcp(m.port));
  out.fetch = await settle(fetch('http://127.0.0.1:' + m.port + '/').then(() => 'connected', (e) => 'error ' + (e.cause && e.cause.code || e.message)));
  out.unix = await settle(unix(m.socket));
  out.killSleeper = kill(m.sleeper, 'SIGKILL');
  out.usr1Parent = kill(m.host, 'SIGUSR1');
  out.usr1Ppid = kill(process.ppid, 'SIGUSR1') + ' (ppid ' + process.ppid + ')';
  out.readWorkspace = read(m.workspace);
  out.readHome = read(m.home);
  out.env = Object.keys(process.env).filter((k) => k !== 'PWD' && !k.startsWith('NODE_CHANNEL'));
  process.send(out, () => process.exit(0));
});
process.send({ ready: true });
`;

interface Verdict {
  tcp: string;
  fetch: string;
  unix: string;
  killSleeper: string;
  usr1Parent: string;
  usr1Ppid: string;
  readWorkspace: string;
  readHome: string;
  env: string[];
}

describe('workflow confinement: an escaped script reaches nothing (issue 20)', function () {
  this.timeout(60_000);
  let dir: string;
  let attack: string;
  let server: net.Server;
  let port: number;
  let heard: string[];
  let unixServer: net.Server;
  let socketPath: string;
  let sleeper: ChildProcess;
  let usr1: number;
  const onUsr1 = () => usr1++;
  let confinement: Confinement;

  before(async () => {
    const c = await scriptConfinement(undefined);
    // bubblewrap is installed by the project's setup (npm test); without it this suite has nothing to test.
    assert.equal(c.confinement.kind, 'bubblewrap', `bubblewrap must work here for this suite: ${c.confinement.kind === 'none' ? c.confinement.reason : ''}`);
    confinement = c.confinement;
  });

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-confine-'));
    attack = path.join(dir, 'attack.js');
    fs.writeFileSync(attack, ATTACK);
    heard = [];
    server = net.createServer((s) => s.on('data', (d) => heard.push(`tcp: ${d.toString()}`)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as net.AddressInfo).port;
    // A host AF_UNIX socket where confined commands were shown to reach one (issue 20 point 3).
    socketPath = path.join('/var/tmp', `arbor-confine-${process.pid}-${Date.now()}.sock`);
    unixServer = net.createServer((s) => s.on('data', (d) => heard.push(`unix: ${d.toString()}`)));
    await new Promise<void>((r) => unixServer.listen(socketPath, r));
    sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
    usr1 = 0;
    process.on('SIGUSR1', onUsr1);
  });

  afterEach(async () => {
    process.off('SIGUSR1', onUsr1);
    sleeper.kill('SIGKILL');
    await new Promise((r) => server.close(r));
    await new Promise((r) => unixServer.close(r));
    fs.rmSync(socketPath, { force: true });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function attackWith(c: Confinement): Promise<Verdict> {
    const p = startProcess(attack, permissionFlags([attack]), c);
    let stderr = '';
    p.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const verdict = new Promise<Verdict>((resolve, reject) => {
      p.on('message', (m: { ready?: boolean } & Verdict) => {
        if (m.ready) p.send({ port, socket: socketPath, sleeper: sleeper.pid, host: process.pid, workspace: dir, home: os.homedir() });
        else resolve(m);
      });
      // 'close', not 'exit': a child's last message can arrive after its 'exit' (it sends the verdict and exits at once;
      // measured here, 38 of 200 such children), never after its 'close', which waits for the IPC channel.
      p.on('close', (code) => reject(new Error(`the attack process exited (${code}) without a verdict: ${stderr}`)));
    });
    try {
      return await verdict;
    } finally {
      p.kill('SIGKILL');
    }
  }

  it('the control: unconfined, the same attack connects, signals and reads (the probes can see)', async () => {
    const v = await attackWith({ kind: 'none', reason: 'control' });
    assert.equal(v.tcp, 'connected');
    assert.equal(v.unix, 'connected');
    assert.equal(v.killSleeper, 'sent');
    await until(() => sleeper.exitCode !== null || sleeper.signalCode !== null, 5000);
    assert.equal(sleeper.signalCode, 'SIGKILL', 'the unconfined attack killed the outside sleeper');
    assert.equal(v.usr1Parent, 'sent', 'the unconfined attack could signal the host');
    await until(() => heard.some((h) => h.startsWith('tcp: hello')) && heard.some((h) => h.startsWith('unix: ')), 5000);
  });

  it('confined: no TCP or fetch to 127.0.0.1, no host Unix socket, no signal to the sleeper or the host, no files, no environment', async () => {
    const v = await attackWith(confinement);
    assert.match(v.tcp, /^error /, `tcp: ${v.tcp}`);
    assert.match(v.fetch, /^error /, `fetch: ${v.fetch}`);
    assert.match(v.unix, /^error /, `unix: ${v.unix}`);
    assert.match(v.killSleeper, /^error ESRCH/, 'the sleeper outside is not even visible');
    assert.match(v.usr1Parent, /^error ESRCH/, 'the host process is not visible');
    assert.match(v.readWorkspace, /^error /, 'the workspace is not in its file system');
    assert.match(v.readHome, /^error /, 'the home folder is not in its file system');
    assert.deepEqual(v.env, [], 'no environment');
    // What the attack aimed at is untouched.
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(heard, [], 'no listener heard anything');
    assert.equal(sleeper.exitCode, null, 'the sleeper still runs');
    assert.equal(sleeper.signalCode, null);
    assert.equal(usr1, 0, 'the host got no SIGUSR1');
  });
});

// Node's permission flags are not a boundary (Node says so), and a Node that refuses them runs
// the script without (run.ts). bubblewrap's root, /tmp and /dev are tmpfs, memory that no RSS
// counts: writable, an escaped script filled them with the host's memory past every limit
// (1 GB written here while the watchdog read 49 MB). With bubblewrap alone nothing is writable.
const FILL = `
const fs = require('node:fs');
const out = {};
const chunk = Buffer.alloc(1024 * 1024, 1);
for (const p of ['/tmp/f', '/f', '/dev/f', '/dev/shm/f']) {
  try { const fd = fs.openSync(p, 'w'); for (let n = 0; n < 8; n++) fs.writeSync(fd, chunk); fs.closeSync(fd); out[p] = 'written'; } catch (e) { out[p] = 'error ' + e.code; }
}
process.send(out, () => process.exit(0));
`;

// Without the flags it can also start processes: a chain of them, each holding memory, was
// counted only four levels deep by the memory watchdog (245 MB read of 888 MB held).
const CHAIN = `
const { fork } = require('node:child_process');
const depth = Number(process.argv[2] || 0);
const hold = Buffer.alloc(32 * 1024 * 1024, 1);
if (depth < 8) fork(__filename, [String(depth + 1)], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] }).on('message', (m) => process.send(m));
else process.send({ deep: depth });
setInterval(() => hold[0]++, 1000);
`;

/** `source` started as `name` in a folder of its own (`prefix`), in bubblewrap alone: the process and its folder. */
async function startInBubblewrap(prefix: string, name: string, source: string): Promise<{ p: ChildProcess; dir: string }> {
  const c = (await scriptConfinement(undefined)).confinement;
  assert.equal(c.kind, 'bubblewrap');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const entry = path.join(dir, name);
  fs.writeFileSync(entry, source);
  return { p: startProcess(entry, [], c), dir };
}

/** The first message `p` sends; an error if it exits first (`before` saying what it had not done). */
function firstMessage<T>(p: ChildProcess, before: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    p.on('message', (m: T) => resolve(m));
    p.on('close', (code) => reject(new Error(`exited ${code} ${before}`)));
  });
}

describe('workflow confinement: an escaped script without Node’s permission flags writes nothing, and all its memory counts', function () {
  this.timeout(60_000);
  it('bubblewrap alone: its root, /tmp and /dev are read-only (no memory to fill unseen)', async () => {
    const { p, dir } = await startInBubblewrap('arbor-fill-', 'fill.js', FILL);
    try {
      const out = await firstMessage<Record<string, string>>(p, 'without a verdict');
      assert.deepEqual(Object.keys(out).sort(), ['/dev/f', '/dev/shm/f', '/f', '/tmp/f']);
      for (const [where, what] of Object.entries(out)) assert.match(what, /^error /, `${where}: ${what}`);
    } finally {
      p.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a chain of processes nine deep: the memory watchdog counts every one', async () => {
    const { p, dir } = await startInBubblewrap('arbor-chain-', 'chain.js', CHAIN);
    try {
      await firstMessage<unknown>(p, 'before the chain stood');
      // Nine Nodes each holding 32 MiB (and ~40 MiB of their own); the walk four deep saw three of them.
      const kb = treeRssKb(p.pid!);
      assert.ok(kb >= 9 * 32 * 1024, `the watchdog read ${Math.round(kb / 1024)} MiB`);
    } finally {
      if (p.pid) {
        try {
          process.kill(-p.pid, 'SIGKILL');
        } catch {
          p.kill('SIGKILL');
        }
      }
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('workflow confinement: the tool runs scripts only in a sandbox unless the user allows otherwise', () => {
  describe('with a bubblewrap that cannot start', () => {
    const x = workflowWorld({ workflow: { bwrapPath: '/nonexistent/bwrap' } });
    it('the workflow tool refuses with NO_SANDBOX, says why and what to do, and starts nothing', async () => {
      const o = await x.run('return await agent("x");');
      assert.equal(o.status, 'failed');
      assert.equal(o.code, 'NO_SANDBOX');
      assert.match(o.error!, /not installed/);
      assert.match(o.error!, /allowUnconfinedScripts/);
      assert.equal(x.events('workflow/start').length, 0, 'no run was started');
      assert.equal(x.w.t.h.store.children(x.root.id).length, 0, 'no agent was created');
    });
  });

  describe('with a bubblewrap that cannot start, and unconfined scripts allowed', () => {
    const x = workflowWorld({ workflow: { bwrapPath: '/nonexistent/bwrap', allowUnconfined: true } });
    it('the script runs as a plain child process', async () => {
      const o = await x.run('return await agent("x");');
      assert.equal(o.status, 'completed', o.error);
      assert.equal(JSON.parse(o.resultJson!), 'did x');
    });
  });

  // Decision 0125, amended in s60: the user's allowUnconfinedScripts does not reach past a ceiling
  // (Restricted Mode here; an explicit CLI --sandbox refuses the flag pair up front). Through a
  // model turn, so the ceiling comes the way it does in use: in the workflow tool's context.
  describe('with a bubblewrap that cannot start, unconfined scripts allowed, and a Restricted Mode ceiling', () => {
    const x = workflowWorld({
      sandbox: 'read-only',
      approval: 'never',
      ceiling: { ...RESTRICTED_CEILING },
      workflow: { bwrapPath: '/nonexistent/bwrap', allowUnconfined: true },
    });
    it('the workflow tool refuses with POLICY_CEILING, says why and how to lift it, and starts nothing', async () => {
      x.replies((_p, body) =>
        body.messages[body.messages.length - 1].role === 'tool'
          ? { text: 'refused' }
          : { toolCalls: [{ name: 'workflow', arguments: { script: 'return await agent("x");', meta: { name: 'w', description: 'd' } } }] },
      );
      await x.root.accept('run a workflow', { kind: 'user' });
      await x.w.t.h.settle();
      const result = x.root.session.events.find((e) => e.type === 'tool/result') as { content: string; isError?: boolean } | undefined;
      assert.ok(result?.isError, result?.content);
      assert.match(result.content, /^workflow: POLICY_CEILING: /);
      assert.match(result.content, /not installed/);
      assert.match(result.content, /Restricted Mode.*trust the workspace/);
      assert.equal(x.events('workflow/start').length, 0, 'no run was started');
      assert.equal(x.w.t.h.store.children(x.root.id).length, 0, 'no agent was created');
    });
  });

  describe('with bubblewrap', () => {
    const x = workflowWorld();
    it('the script process is bubblewrap’s child: its Node runs inside, with no network and its own PID namespace', async () => {
      x.replies(() => ({ text: 'late', delayMs: 1500 }));
      const seen: string[] = [];
      const o = x.run('return await agent("slow");');
      await until(() => {
        for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
          try {
            const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
            // This checkout's script only: other runs on a shared machine (another clone, a
            // worktree's host tests) have theirs, some of them unconfined by design.
            if (cmd.some((a) => a.endsWith('workflow-child.js') && a.startsWith(CHECKOUT))) seen.push(cmd.join(' '));
          } catch {
            // gone
          }
        }
        return seen.length > 0;
      }, 10_000);
      const outcome = await o;
      assert.equal(outcome.status, 'completed', outcome.error);
      const wrapper = seen.find((c) => /bwrap/.test(c.split(' ')[0]));
      assert.ok(wrapper, `a bwrap process runs the script: ${seen.join('\n')}`);
      for (const flag of ['--unshare-all', '--die-with-parent', '--cap-drop']) assert.ok(wrapper.includes(flag), `${flag} in ${wrapper}`);
      assert.ok(!wrapper.includes('--share-net'), 'no network');
      assert.ok(!wrapper.includes(x.w.t.workspace), 'the workspace is not mounted');
    });
  });
});
