import { spawn, spawnSync } from 'node:child_process';

// What a confined command can do to the host's file tools: swap two names of the workspace (a
// real folder or file, and a symlink to somewhere else) again and again, so that a path the host
// checked a moment ago names the other one when it acts (decision 0097).

/**
 * Exchanges `a` and `b` until `ms` pass: one atomic renameat2(RENAME_EXCHANGE) through python3's
 * ctypes where it runs (what a compiled program in the sandbox does), else renames a moment apart
 * (Node has no exchange), putting the real one back wherever a tool made a new one meanwhile.
 */
const EXCHANGE = `
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
a, b, ms = sys.argv[1].encode(), sys.argv[2].encode(), int(sys.argv[3])
end = time.time() + ms / 1000
n = 0
while time.time() < end:
    if libc.renameat2(-100, a, -100, b, 2) == 0:
        n += 1
print(n)
`;
const RENAMES = `
const fs = require('fs');
const [a, b, ms] = process.argv.slice(1);
const hold = a + '.held';
const end = Date.now() + Number(ms);
let n = 0;
while (Date.now() < end) {
  try { fs.renameSync(a, hold); fs.renameSync(b, a); fs.renameSync(a, b); n++; } catch {}
  try { fs.renameSync(hold, a); } catch { try { fs.rmSync(a, { recursive: true, force: true }); fs.renameSync(hold, a); } catch {} }
}
process.stdout.write(String(n));
`;

/** Whether the swaps are atomic exchanges (python3 with renameat2) rather than renames. */
export const exchangeRuns = spawnSync('python3', ['-c', 'import ctypes; ctypes.CDLL(None).renameat2'], { stdio: 'ignore' }).status === 0;

/** A swapper running: `swaps` is how many swaps it made once it ended; `done` says it has. */
export interface Swapper {
  swaps: Promise<number>;
  readonly done: boolean;
  /** Ends it now (SIGTERM); `swaps` then says 0 for a python swapper that had no time to print. */
  stop(): void;
}

/** Starts swapping `a` and `b` for `ms` (from its own start: on a busy machine python may start late). */
export function swapPaths(a: string, b: string, ms: number): Swapper {
  const proc = exchangeRuns
    ? spawn('python3', ['-c', EXCHANGE, a, b, String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] })
    : spawn(process.execPath, ['-e', RENAMES, a, b, String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout?.on('data', (d) => (out += d));
  const s = { done: false, swaps: Promise.resolve(0), stop: () => void proc.kill('SIGTERM') };
  s.swaps = new Promise<number>((resolve) =>
    proc.on('close', () => {
      s.done = true;
      resolve(Number(out) || 0);
    }),
  );
  return s;
}

/** Runs `fn` over and over, in slices that let the event loop turn, until the swapper has ended. */
export async function whileSwapping(s: Swapper, fn: () => void): Promise<void> {
  while (!s.done) {
    const slice = Date.now() + 50;
    while (Date.now() < slice) fn();
    await new Promise((r) => setImmediate(r));
  }
}
