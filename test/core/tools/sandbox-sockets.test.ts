// Issue 20.3: "no network" covers Unix sockets. A confined command tries to reach a real
// AF_UNIX listener on the host (a socket file in /var/tmp, as the Docker socket or the D-Bus
// session bus would be); the seccomp filter refuses the socket, and the listener sees nothing.
// With the network allowed, IP works and Unix sockets still do not.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { createRunCommandTool } from '../../../src/core/tools/run-command';
import { bwrapArgs } from '../../../src/core/tools/sandbox/bwrap-args';
import { CommandSandbox } from '../../../src/core/tools/sandbox/command-sandbox';
import { describeSandboxStatus, sandboxStatus } from '../../../src/core/tools/sandbox/detect';
import { unixSocketFilter } from '../../../src/core/tools/sandbox/seccomp';
import { call, makeWorkspace, type Workspace } from './fixture';

describe('OS sandbox: no Unix sockets out (issue 20.3)', () => {
  let ws: Workspace;
  let dir: string;
  let sock: string;
  let unix: net.Server;
  let tcp: net.Server;
  let port: number;
  const seen = { unix: 0, unixBytes: 0, tcp: 0 };

  before(async () => {
    const status = await sandboxStatus();
    if (!status.available) throw new Error(`These tests need bubblewrap, and ${status.reason}. Run "npm run setup:e2e" (it installs bubblewrap).`);
    tcp = net.createServer((s) => {
      seen.tcp++;
      s.on('error', () => undefined);
      s.end('hello\n');
    });
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
    port = (tcp.address() as net.AddressInfo).port;
  });
  after(() => new Promise<void>((r) => tcp.close(() => r())));
  beforeEach(async () => {
    ws = makeWorkspace();
    dir = fs.mkdtempSync('/var/tmp/arbor-unix-test-');
    sock = path.join(dir, 'agent.sock');
    seen.unix = 0;
    seen.unixBytes = 0;
    seen.tcp = 0;
    unix = net.createServer((s) => {
      seen.unix++;
      s.on('data', (d) => {
        seen.unixBytes += d.length;
      });
      s.on('error', () => undefined);
      s.end('welcome\n');
    });
    await new Promise<void>((r) => unix.listen(sock, r));
  });
  afterEach(async () => {
    await new Promise<void>((r) => unix.close(() => r()));
    ws.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const node = (script: string) => `${JSON.stringify(process.execPath)} -e ${JSON.stringify(script)}`;
  const unixConnect = () =>
    node(
      `require('net').connect(${JSON.stringify(sock)}).on('connect', function () { this.write('GET /containers/json\\n'); console.log('unix connected'); setTimeout(() => process.exit(0), 200) }).on('error', (e) => { console.log('unix refused: ' + e.code); process.exit(0) })`,
    );
  const tcpConnect = () =>
    node(
      `require('net').connect(${port}, '127.0.0.1').on('connect', () => { console.log('ip connected'); process.exit(0) }).on('error', (e) => { console.log('ip refused: ' + e.code); process.exit(0) })`,
    );
  // socketpair stays allowed: node's child_process makes its stdio pipes with it.
  const pair = () => node(`console.log('pair: ' + require('child_process').execFileSync('/bin/echo', ['works']).toString().trim())`);

  it('a confined command cannot connect to a host Unix socket, and the listener receives nothing', async () => {
    const r = await call(createRunCommandTool(), { command: `${unixConnect()}; ${pair()}; echo done` }, ws.ctx());
    assert.equal(r.isError, false, r.content);
    assert.match(r.content, /--- stdout ---\nunix refused: EPERM\npair: works\ndone/);
    assert.equal(seen.unix, 0, 'the listener saw no connection');
    assert.equal(seen.unixBytes, 0);
  });

  it('in read-only mode too, and from a client that is not node (git credential-cache, C), which unconfined does reach the listener', async () => {
    const gitClient = `git credential-cache --socket ${sock} exit 2>&1 | tail -1; echo git-done`;
    const r = await call(createRunCommandTool(), { command: `${unixConnect()}; ${gitClient}` }, ws.ctx({ sandbox: 'read-only' }));
    assert.match(r.content, /unix refused: EPERM/);
    assert.match(r.content, /git-done/);
    assert.equal(seen.unix, 0, 'the listener saw no connection');
    assert.equal(seen.unixBytes, 0);
    const free = await call(createRunCommandTool(), { command: gitClient }, ws.ctx({ sandbox: 'full-access' }));
    assert.match(free.content, /git-done/);
    assert.ok(await waitFor(() => seen.unixBytes > 0), 'unconfined, git sent its request: the client is a real one');
  });

  it('with the network allowed, IP to 127.0.0.1 works and Unix sockets are still refused', async () => {
    const open = createRunCommandTool({ sandbox: new CommandSandbox({ network: () => true }) });
    const r = await call(open, { command: `${tcpConnect()}; ${unixConnect()}; echo done` }, ws.ctx());
    assert.match(r.content, /--- stdout ---\nip connected\nunix refused: EPERM\ndone/);
    assert.equal(seen.tcp, 1);
    assert.equal(seen.unix, 0);
  });

  // AF_VSOCK is no network namespace's: on a virtual machine (WSL2, Firecracker, a cloud VM with an
  // agent) it is a channel to the hypervisor's host and to its services, with or without the network.
  // The proof it is shared: a port bound outside the sandbox is in use inside it.
  const vsock = (port: number) =>
    `python3 -c "import socket,errno\ntry:\n s=socket.socket(40, socket.SOCK_STREAM)\nexcept OSError as e:\n print('vsock refused: '+errno.errorcode[e.errno]); raise SystemExit\ntry:\n s.bind((0xffffffff, ${port})); print('vsock bound')\nexcept OSError as e:\n print('vsock bind: '+errno.errorcode[e.errno])"`;
  it("no vsock (the channel to a virtual machine's host, in no network namespace), without the network and with it", async function () {
    const { execFileSync, spawn } = await import('node:child_process');
    let hostHas: string;
    try {
      hostHas = execFileSync('/bin/sh', ['-c', vsock(0)])
        .toString()
        .trim();
    } catch {
      hostHas = 'no python3';
    }
    if (!/vsock bound/.test(hostHas)) {
      console.log(`      (skipped: no vsock on this machine: ${hostHas})`);
      this.skip();
    }
    // A listener outside the sandbox on a port of its own.
    const port = 40_000 + Math.floor(Math.random() * 20_000);
    const outside = spawn(
      'python3',
      [
        '-c',
        `import socket,time\ns=socket.socket(40, socket.SOCK_STREAM)\ns.bind((0xffffffff, ${port}))\ns.listen(1)\nprint('listening', flush=True)\ntime.sleep(30)`,
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    try {
      await new Promise<void>((resolve) => outside.stdout?.once('data', () => resolve()));
      const unconfined = await call(createRunCommandTool(), { command: vsock(port) }, ws.ctx({ sandbox: 'full-access' }));
      assert.match(unconfined.content, /vsock bind: EADDRINUSE/, 'the listener holds the port');
      for (const network of [false, true]) {
        const tool = createRunCommandTool({ sandbox: new CommandSandbox({ network: () => network }) });
        const r = await call(tool, { command: `${vsock(port)}; echo done` }, ws.ctx());
        assert.match(r.content, /--- stdout ---\nvsock refused: EPERM\ndone/, `network ${network}: ${r.content}`);
      }
    } finally {
      outside.kill('SIGKILL');
    }
  });

  // A datagram pair needs no `socket` call, and a datagram socket sends to any address it is given:
  // `sendto(/dev/log)`, the journal's socket, a wpa_supplicant control socket (all datagram) were
  // reached through `socketpair(AF_UNIX, SOCK_DGRAM)`. SOCK_RAW on AF_UNIX is a datagram socket too.
  const dgram = (to: string) =>
    `python3 -c "import socket,errno\nfor t in (socket.SOCK_DGRAM, socket.SOCK_RAW):\n try:\n  a,b=socket.socketpair(socket.AF_UNIX, t)\n  a.sendto(b'from the sandbox', '${to}'); print('dgram sent')\n except OSError as e:\n  print('dgram refused: '+errno.errorcode[e.errno])\nfor t in (socket.SOCK_STREAM, socket.SOCK_SEQPACKET):\n a,b=socket.socketpair(socket.AF_UNIX, t); a.send(b'x'); print('pair', b.recv(1).decode())"`;
  it('a datagram socket pair does not reach a host datagram socket (the journal, /dev/log); stream and seqpacket pairs still work', async () => {
    const { spawn } = await import('node:child_process');
    const log = path.join(dir, 'log.sock');
    const listener = spawn(
      'python3',
      [
        '-c',
        `import socket\ns=socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\ns.bind('${log}')\nprint('listening', flush=True)\nwhile True: print('got', s.recv(100), flush=True)`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let got = '';
    listener.stdout.on('data', (d) => {
      got += d;
    });
    try {
      await waitFor(() => got.includes('listening'), 5000);
      for (const sandbox of ['workspace-write', 'read-only'] as const) {
        const r = await call(createRunCommandTool(), { command: `${dgram(log)}; echo done` }, ws.ctx({ sandbox }));
        assert.match(r.content, /--- stdout ---\ndgram refused: EPERM\ndgram refused: EPERM\npair x\npair x\ndone/, `${sandbox}: ${r.content}`);
      }
      const free = await call(createRunCommandTool(), { command: dgram(log) }, ws.ctx({ sandbox: 'full-access' }));
      assert.match(free.content, /dgram sent/, 'unconfined, the same command reaches the listener');
      assert.ok(await waitFor(() => got.includes('got')), 'the listener is a real one');
      assert.equal(got.match(/got/g)?.length, 2, `only the unconfined datagrams arrived: ${got}`);
    } finally {
      listener.kill('SIGKILL');
    }
  });

  it('unconfined (full-access) the same command connects: the check sees an escape', async () => {
    const r = await call(createRunCommandTool(), { command: `${unixConnect()}; echo done` }, ws.ctx({ sandbox: 'full-access' }));
    assert.match(r.content, /unix connected/);
    assert.ok(await waitFor(() => seen.unixBytes > 0), 'the listener received the request');
  });

  it('the filter exists for x86_64 and aarch64 (8-byte instructions); an unknown machine gets none and the status says sockets are open', () => {
    for (const arch of ['x64', 'arm64']) {
      const f = unixSocketFilter(arch);
      assert.ok(f && f.length > 0 && f.length % 8 === 0, arch);
    }
    assert.equal(unixSocketFilter('riscv64'), undefined);
    assert.match(
      describeSandboxStatus({ available: true, kind: 'bubblewrap', bwrap: 'bwrap', unixSocketsOpen: 'Arbor has no seccomp filter for riscv64' }),
      /Unix sockets are NOT blocked: Arbor has no seccomp filter for riscv64/,
    );
  });

  it("session folders (/run/user) are covered by an empty tmpfs before the roots are bound: a real bwrap run hides a stand-in folder's socket", async () => {
    // /run/user is not there on every machine: the same mount on a folder of our own.
    const args = bwrapArgs({ mode: 'workspace-write', roots: [ws.root], readOnly: [], shadow: [], network: false, cwd: ws.root, hidden: [dir] });
    assert.deepEqual(args.slice(args.indexOf(dir) - 1, args.indexOf(dir) + 1), ['--tmpfs', dir]);
    assert.ok(args.indexOf(dir) < args.indexOf(ws.root), 'hidden before the roots');
    const { execFileSync } = await import('node:child_process');
    const out = execFileSync('bwrap', [...args, '--', '/bin/sh', '-c', `ls -A ${dir} | wc -l`]).toString();
    assert.equal(out.trim(), '0', 'the socket file is not there inside');
  });
});

async function waitFor(cond: () => boolean, ms = 2000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return cond();
}
