// A store writer meant to be killed: run as a child process by the crash spec.
//
//   node crash-writer.js <dir> [--checkpoint-bytes N] [--checkpoint-ms N] [--exit-after N] [--pause-ms N] [--seed N]
//
// Opens the Store at <dir>, creates its sessions if missing (a root, a child of it, and a
// second root in another tree file), then appends batches of 1–20 events to all three at
// once, each continuing from the stored length. After each append resolves it writes
// `ack <sessionId> <lastSeq>` to stdout synchronously, so every acknowledged append is
// reported before the next one starts. Events are pure functions of (session, seq), so the
// reader can check every stored event without being told its content.
// With --exit-after N it kills itself (SIGKILL, no close) after N acknowledgements;
// with --pause-ms N each loop waits a random 0..N ms between appends (to bound the log's growth);
// with --checkpoint-ms N a fourth loop also calls store.checkpoint() every 0..N ms, while
// the appends go on (so kills land inside checkpoints however large the files grow).
import * as fs from 'node:fs';
import { Store } from '../../src/core/store';
import { CRASH_SESSIONS, childHeader, eventsFor, prng, rootHeader } from './store-fixtures';

function arg(name: string): number | undefined {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : undefined;
}

function say(line: string): void {
  const buf = Buffer.from(`${line}\n`);
  for (let off = 0; off < buf.length; ) {
    try {
      off += fs.writeSync(1, buf, off);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
    }
  }
}

async function main(): Promise<void> {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: crash-writer <dir> [--checkpoint-bytes N] [--checkpoint-ms N] [--exit-after N] [--pause-ms N] [--seed N]');
  const exitAfter = arg('--exit-after');
  const pauseMs = arg('--pause-ms') ?? 0;
  const checkpointMs = arg('--checkpoint-ms');
  const sleep = (max: number) => new Promise((r) => setTimeout(r, Math.floor(rnd() * (max + 1))));
  const rnd = prng(arg('--seed') ?? process.pid);
  const store = await Store.open(dir, { checkpointBytes: arg('--checkpoint-bytes') ?? 64 * 1024 });

  const [root, child, other] = CRASH_SESSIONS;
  if (!store.has(root)) await store.createSession(rootHeader(root));
  if (!store.has(child)) await store.createSession(childHeader(child, root));
  if (!store.has(other)) await store.createSession(rootHeader(other));
  say('ready');

  let acks = 0;
  const loop = async (id: string): Promise<void> => {
    let next = await store.length(id);
    for (;;) {
      const n = 1 + Math.floor(rnd() * 20);
      await store.append(id, eventsFor(id, next, next + n));
      next += n;
      say(`ack ${id} ${next - 1}`);
      if (exitAfter !== undefined && ++acks >= exitAfter) process.kill(process.pid, 'SIGKILL');
      if (pauseMs > 0) await sleep(pauseMs);
    }
  };
  const checkpoints = async (): Promise<void> => {
    if (checkpointMs === undefined) return;
    for (;;) {
      await sleep(checkpointMs);
      await store.checkpoint();
    }
  };
  await Promise.all([...CRASH_SESSIONS.map(loop), checkpoints()]);
}

main().catch((err: unknown) => {
  process.stderr.write(`crash-writer failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
