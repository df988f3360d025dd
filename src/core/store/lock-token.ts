import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { bootId } from '../process/proc-stat';

// The lock holder's liveness token (decision 0098, amended): a Unix socket beside the lock that
// the holder listens on while it holds the lock. The kernel closes the listener when the holder
// dies, however it dies, so a checker's connect succeeds while the holder runs (a stopped holder
// too: the kernel queues the connection, and once its queue is full says EAGAIN, which only a
// listener says) and is refused once it is gone — from any PID namespace of the same kernel (a
// sandbox or container below, above or beside the holder), where a pid means nothing. Linux only:
// a token is asked only for a lock written in this boot of this kernel (its boot id), and a
// socket has no listener on another machine sharing the folder. A socket, not a FIFO: opening a
// socket file fails at once (ENXIO), so a backup tool or a `grep -r` reading the store folder
// never waits on it, where a FIFO without a writer blocks its reader for good.

/** A token's file name in the lock's folder: nothing else is ever asked from a lock's text. */
const NAME = /^arbor\.lock\.live-[0-9a-f]{16}$/;

/** The longest socket path the kernel takes (sun_path is 108 bytes with its NUL); longer ones go through the folder's open descriptor. */
const MAX_SOCKET_PATH = 107;

/** How long a checker waits for the holder's kernel to answer a connect (it answers at once; a bound). */
const ASK_MS = 2000;

export type TokenState = 'alive' | 'gone' | 'unknown';

export function isTokenName(name: string): boolean {
  return NAME.test(name);
}

/**
 * `file` by a path short enough for a socket: itself, or its name under `/proc/self/fd/<n>`, a
 * descriptor of its folder held open while `use` runs (the kernel resolves it to that very
 * folder: no link anyone else could swap, nothing left behind).
 */
async function viaShortPath<T>(file: string, use: (p: string) => Promise<T>): Promise<T> {
  if (Buffer.byteLength(file) <= MAX_SOCKET_PATH) return use(file);
  const fd = fs.openSync(path.dirname(file), fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    return await use(`/proc/self/fd/${fd}/${path.basename(file)}`);
  } finally {
    fs.closeSync(fd);
  }
}

/** The socket this process listens on while it holds a lock. */
export class LiveToken {
  private constructor(
    private readonly file: string,
    private server: net.Server | undefined,
  ) {}

  /** The token's name in the lock's folder (what the lock records). */
  get name(): string {
    return path.basename(this.file);
  }

  /**
   * A new token in `dir`, listening; undefined where none would be asked (not Linux: no boot id)
   * or none can be made (a file system without sockets): the lock is then judged by its pid alone.
   */
  static async make(dir: string): Promise<LiveToken | undefined> {
    if (process.platform !== 'linux' || !bootId()) return undefined;
    const file = path.join(path.resolve(dir), `arbor.lock.live-${randomBytes(8).toString('hex')}`);
    // A connection is only ever a question: answered by closing it.
    const server = net.createServer((socket) => socket.destroy());
    try {
      await viaShortPath(
        file,
        (p) =>
          new Promise<void>((resolve, reject) => {
            server.once('error', reject);
            server.listen(p, () => {
              server.off('error', reject);
              resolve();
            });
          }),
      );
    } catch {
      server.close();
      fs.rmSync(file, { force: true });
      return undefined;
    }
    server.unref(); // it never keeps the process alive
    server.on('error', () => undefined);
    return new LiveToken(file, server);
  }

  /** Let go: the listener closed (a checker now hears the holder gone), the socket file removed. */
  close(): void {
    if (!this.server) return;
    this.server.close();
    this.server = undefined;
    fs.rmSync(this.file, { force: true });
  }
}

/**
 * What a holder's token says: 'alive' (its listener answers), 'gone' (refused: the holder is
 * dead) or 'unknown' (no such socket, or it cannot be asked: the pid decides). Asks nothing but
 * a socket with a token's name in `dir` (one that is a link, to a live socket or not, is unknown).
 */
export async function tokenState(dir: string, name: string): Promise<TokenState> {
  if (!isTokenName(name)) return 'unknown';
  const file = path.join(path.resolve(dir), name);
  try {
    if (!fs.lstatSync(file).isSocket()) return 'unknown';
    return await viaShortPath(file, ask);
  } catch {
    return 'unknown';
  }
}

function ask(file: string): Promise<TokenState> {
  return new Promise((resolve) => {
    const socket = net.connect({ path: file });
    const done = (state: TokenState) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(state);
    };
    const timer = setTimeout(() => done('unknown'), ASK_MS);
    socket.once('connect', () => done('alive'));
    // EAGAIN: the listener's queue is full (a stopped holder asked many times): only a listener says so.
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code === 'ECONNREFUSED' ? 'gone' : err.code === 'EAGAIN' ? 'alive' : 'unknown'));
  });
}

/** Remove a dead holder's token: only a socket with a token's name. */
function removeToken(dir: string, name: string | undefined): void {
  if (!name || !isTokenName(name)) return;
  const file = path.join(dir, name);
  try {
    if (fs.lstatSync(file).isSocket()) fs.rmSync(file, { force: true });
  } catch {
    // gone already
  }
}

/**
 * Remove every token in `dir` but `mine` whose listener is gone: left by a holder whose lock was
 * deleted by hand, a takeover contender that died, or a takeover by an older Arbor. Asked by the
 * lock's new holder; a live one (a contender still asking) is left alone.
 */
export async function sweepTokens(dir: string, mine: string | undefined): Promise<void> {
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => isTokenName(n) && n !== mine);
  } catch {
    return;
  }
  await Promise.all(
    names.map(async (n) => {
      if ((await tokenState(dir, n)) === 'gone') removeToken(dir, n);
    }),
  );
}
