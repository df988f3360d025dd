import * as fs from 'node:fs';
import * as path from 'node:path';

/** fsync a directory so a rename or a new file in it survives power loss. */
export async function fsyncDir(dir: string): Promise<void> {
  const fh = await fs.promises.open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * `mkdir -p` by hand: each missing folder made on its own, from the highest one down. Node's
 * recursive mkdir never returns where mkdir says ENOENT under a folder that exists (procfs:
 * `/proc/x/y`) — its thread-pool thread spins for good, and four of them stop every file
 * operation of the process; here that ENOENT is the answer.
 */
export async function makeDirs(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    try {
      await fs.promises.stat(d);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    missing.push(d);
    if (path.dirname(d) === d) break;
  }
  for (const d of missing.reverse()) {
    try {
      await fs.promises.mkdir(d);
    } catch (e) {
      // Made meanwhile (another writer) is made.
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}

/**
 * Replace `file` atomically: write a temp file, fsync it, rename over, fsync the folder. A temp
 * file that could not be finished (a full disk) is removed at once, never left holding the
 * space until the next open's `removeStaleTemps`.
 */
export async function writeFileAtomic(file: string, bytes: Uint8Array): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}`;
  const fh = await fs.promises.open(tmp, 'w');
  try {
    try {
      await fh.writeFile(bytes);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fs.promises.rename(tmp, file);
  } catch (e) {
    await fs.promises.rm(tmp, { force: true }).catch(() => undefined);
    throw e;
  }
  await fsyncDir(path.dirname(file));
}

/**
 * Write an intent (`<dir>/<name>.json`) durably before the work it names; returns its removal,
 * for when the work's record is in the log (a crash before it leaves the intent to `drainIntents`),
 * or the work was given up. The removal is made durable (the folder fsynced) unless the caller
 * says the work's record is durable already (`recorded`): an intent a crash brings back after
 * that is found recorded at the next open and only removed, so that fsync buys nothing.
 */
export async function writeIntentFile(dir: string, name: string, intent: unknown): Promise<(recorded?: boolean) => Promise<void>> {
  await makeDirs(dir);
  const file = path.join(dir, `${name}.json`);
  await writeFileAtomic(file, Buffer.from(JSON.stringify(intent)));
  return async (recorded = false) => {
    await fs.promises.rm(file, { force: true });
    if (!recorded) await fsyncDir(dir).catch(() => undefined);
  };
}

/**
 * Each intent a crash left in `dir` (`<name>.json`, written by `writeFileAtomic`), oldest name
 * first: parsed (undefined when unreadable) and handed to `each`, then removed; an intent's temp
 * file a crash cut before its rename (nothing of it acted on yet) is only removed. The folder is
 * fsynced once when anything went.
 */
export async function drainIntents<T>(dir: string, each: (intent: T | undefined) => Promise<void>): Promise<void> {
  const all = await fs.promises.readdir(dir).catch(() => [] as string[]);
  for (const n of all.filter((x) => /\.json\.tmp-\d+$/.test(x))) await fs.promises.rm(path.join(dir, n), { force: true });
  const names = all.filter((n) => n.endsWith('.json')).sort();
  for (const name of names) {
    const file = path.join(dir, name);
    const intent = await fs.promises
      .readFile(file, 'utf8')
      .then((t) => JSON.parse(t) as T)
      .catch(() => undefined);
    await each(intent);
    await fs.promises.rm(file, { force: true });
  }
  if (names.length) await fsyncDir(dir).catch(() => undefined);
}

/**
 * A file's bytes, or undefined when it does not exist (as `fs.existsSync` says). Opened and
 * measured synchronously, its bytes read in one call: `fs.promises.readFile` reads in 512 KiB
 * chunks, a thread-pool round trip each, which a loaded machine makes slow (a 5 MB tree, 14).
 */
export async function readWhole(file: string): Promise<Buffer | undefined> {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    if (!fs.existsSync(file)) return undefined;
    throw err;
  }
  try {
    const size = fs.fstatSync(fd).size;
    const bytes = Buffer.allocUnsafeSlow(size);
    let done = 0;
    while (done < size) {
      const n = await readAt(fd, bytes, done, size - done, done);
      if (n === 0) break;
      done += n;
    }
    return done < size ? bytes.subarray(0, done) : bytes;
  } finally {
    fs.closeSync(fd);
  }
}

function readAt(fd: number, into: Buffer, offset: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => fs.read(fd, into, offset, length, position, (err, n) => (err ? reject(err) : resolve(n))));
}

/** The name a quarantined file is moved to: `<file>.corrupt-<time>`. */
export function quarantineName(file: string, now = new Date()): string {
  return `${file}.corrupt-${now.toISOString().replace(/[:.]/g, '-')}`;
}

/** Move a file aside (if it exists) and return where it went. */
export async function moveAside(file: string): Promise<string | undefined> {
  if (!fs.existsSync(file)) return undefined;
  let target = quarantineName(file);
  for (let i = 1; fs.existsSync(target); i++) target = `${quarantineName(file)}-${i}`;
  await fs.promises.rename(file, target);
  await fsyncDir(path.dirname(file));
  return target;
}

/** Remove temp files a crash left behind during a checkpoint. */
export async function removeStaleTemps(dir: string, base: string): Promise<void> {
  for (const name of await fs.promises.readdir(dir)) {
    if (name.startsWith(`${base}.tmp-`)) await fs.promises.rm(path.join(dir, name), { force: true });
  }
}

/**
 * Delete a journaled file's `<base>.wal`, `<base>.db` and checkpoint temps, durably: the journal
 * first, so a crash part way leaves a database file that opens on its own, never a journal
 * without its database. Quarantined copies (`*.corrupt-*`) stay: they are for a person to read.
 */
export async function removeJournaledFiles(dir: string, base: string): Promise<void> {
  await fs.promises.rm(path.join(dir, `${base}.wal`), { force: true });
  await fs.promises.rm(path.join(dir, `${base}.db`), { force: true });
  await removeStaleTemps(dir, `${base}.db`);
  await fsyncDir(dir);
}
