// Commands and the many-file writers (a rewind, a worktree's apply) of the same roots, kept apart
// (decision 0059, amended in s50). A command is recorded as the difference of its roots before and
// after it: a rewind or an apply written inside that window would be recorded as the command's own
// change, and a file the command writes between the writer's check and its write would be
// overwritten unseen. So a writer is refused while a command runs in a root holding one of its
// files — it never waits on a command (a command may run for minutes, and a rewind asked for from
// a turn beside its own command would wait on itself) — and a command asked for while a writer
// writes in one of its roots waits for it: its checks and writes, no longer.

import { isWithin } from './real-path';

/** A command between its first snapshot and its last (the checkpoint recorder's `before` and `after`). */
export interface RunningCommand {
  /** Whose: the agent's name as the panel shows it. */
  who: string;
  command: string;
  /** Real paths of its writable roots. */
  roots: readonly string[];
}

const running = new Set<RunningCommand>();
const writers = new Set<{ files: readonly string[]; done: Promise<void> }>();

const within = (roots: readonly string[], files: readonly string[]): boolean => files.some((f) => roots.some((r) => isWithin(f, r)));

/**
 * A command is about to be snapshotted and run in `c.roots`: waits while a writer writes a file
 * there, then counts it as running. Returns its release (idempotent); undefined when `signal`
 * ended the wait (the command then does not run).
 */
export async function commandEntering(c: RunningCommand, signal?: AbortSignal): Promise<(() => void) | undefined> {
  for (;;) {
    if (signal?.aborted) return undefined;
    const writer = [...writers].find((w) => within(c.roots, w.files));
    if (!writer) break;
    await untilAborted(writer.done, signal);
  }
  const mine = { ...c };
  running.add(mine);
  return () => void running.delete(mine);
}

/**
 * Run `fn`, a writer of `files` (real paths), with no command running in a root that holds one of
 * them: when some do, `refuse(them)` is thrown before `fn` runs; while it runs, commands asked for
 * in those roots wait for it.
 */
export async function withCommandsOut<T>(files: readonly string[], refuse: (busy: RunningCommand[]) => Error, fn: () => Promise<T>): Promise<T> {
  const busy = [...running].filter((c) => within(c.roots, files));
  if (busy.length) throw refuse(busy);
  let end!: () => void;
  const me = { files, done: new Promise<void>((r) => (end = r)) };
  writers.add(me);
  try {
    return await fn();
  } finally {
    writers.delete(me);
    end();
  }
}

/** How a refusal names the commands: whose, and the command line (cut). */
export function describeCommands(busy: readonly RunningCommand[]): string {
  const cut = (s: string) => (s.length > 80 ? `${s.slice(0, 79)}…` : s);
  return busy.map((c) => `${c.who} runs \`${cut(c.command.trim())}\``).join('; ');
}

function untilAborted(p: Promise<void>, signal?: AbortSignal): Promise<void> {
  if (!signal) return p;
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    p.then(done);
  });
}
