import { type ChildProcess, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { signalGroup } from './group';
import type { FromSpawner, ToSpawner } from './spawner-wire';
import { killGroupAndStrays } from './strays';

// The spawner process (decision 0095): a small Node that starts the short-lived programs of a
// large host — commands, hooks, git — so that their fork copies this process's few page tables
// instead of the host's hundreds of megabytes, and the host's next writes pay no copy-on-write
// faults. It only starts, relays and reports: each program leads a process group of its own
// (`detached`), its stdin and fd 3 get the bytes the host sent and are closed, its output comes
// back in chunks (paused while more than HIGH_WATER bytes are unsent: the host's pace is the
// program's), then its exit and its close. Stopping a program stays with the host, which signals
// the group itself (`process/group.ts`) — until the host is gone: then nobody else can, and the
// spawner kills what it still runs before it leaves. This file is an entry point of its own
// (out/…/spawner-child.js, dist/spawner-child.js) and imports only `group.ts` and `proc-stat.ts` (Node modules alone) of ours.

/** Unsent output past which the programs' pipes are paused until the host has taken it. */
const HIGH_WATER = 1024 * 1024;

const running = new Map<number, ChildProcess>();
let unsent = 0;
const paused = new Set<Readable>();

function send(m: FromSpawner): void {
  if (!process.connected) return;
  const bytes = m.op === 'data' ? m.data.length : 0;
  unsent += bytes;
  process.send!(m, undefined, undefined, () => {
    unsent -= bytes;
    if (unsent <= HIGH_WATER && paused.size) {
      for (const s of paused) s.resume();
      paused.clear();
    }
  });
}

function relay(id: number, fd: 1 | 2, stream: Readable | null): void {
  stream?.on('data', (data: Buffer) => {
    send({ op: 'data', id, fd, data });
    if (unsent > HIGH_WATER) {
      stream.pause();
      paused.add(stream);
    }
  });
}

function start(m: Extract<ToSpawner, { op: 'spawn' }>): void {
  let child: ChildProcess;
  try {
    child = spawn(m.file, m.args, {
      cwd: m.cwd,
      env: m.env,
      detached: true,
      stdio: [m.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe', ...(m.fd3 ? ['pipe' as const] : [])],
    });
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    send({ op: 'error', id: m.id, message: err.message, code: err.code });
    send({ op: 'close', id: m.id });
    return;
  }
  running.set(m.id, child);
  if (child.pid !== undefined) send({ op: 'spawned', id: m.id, pid: child.pid });
  const feed = (w: NodeJS.WritableStream | null | undefined, bytes: Uint8Array | undefined) => {
    if (!w || !bytes) return;
    // A program that exits before reading its input closes the pipe: its exit says what happened.
    (w as unknown as Readable).on('error', () => undefined);
    w.end(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  };
  feed(child.stdin, m.stdin);
  feed(child.stdio[3] as NodeJS.WritableStream | null, m.fd3);
  relay(m.id, 1, child.stdout);
  relay(m.id, 2, child.stderr);
  child.on('error', (err: NodeJS.ErrnoException) => send({ op: 'error', id: m.id, message: err.message, code: err.code }));
  child.on('exit', (code, signal) => send({ op: 'exit', id: m.id, code, signal }));
  child.on('close', () => {
    running.delete(m.id);
    paused.delete(child.stdout!);
    paused.delete(child.stderr!);
    send({ op: 'close', id: m.id });
  });
}

/** The host gave up on a program's output (something it left holds the pipes): stop reading them. */
function release(id: number): void {
  const child = running.get(id);
  if (!child) return;
  child.stdout?.destroy();
  child.stderr?.destroy();
}

process.on('message', (m: ToSpawner) => {
  if (m?.op === 'spawn') start(m);
  else if (m?.op === 'release') release(m.id);
});
// The host's terminal's Ctrl-C is the host's to handle (it stops its programs itself).
process.on('SIGINT', () => undefined);
// The host is gone (it exited, crashed or was killed with SIGKILL) or let the spawner go: nobody
// is left to stop what still runs, so the spawner does — each program's group and what it started
// outside it (`setsid`), named while the program still runs — then leaves.
process.on('disconnect', () => {
  for (const child of running.values()) {
    if (child.pid === undefined) continue;
    // One that exited has no descendants to name: only what is left in its group.
    if (child.exitCode === null && child.signalCode === null) killGroupAndStrays(child.pid);
    else signalGroup(child.pid, 'SIGKILL');
  }
  process.exit(0);
});
send({ op: 'ready' });
