import * as fs from 'node:fs';
import * as path from 'node:path';
import { crc32 } from 'node:zlib';
import { StoreError } from './errors';
import { type Holder, liveHolder, ownerText, parseOwner, thisOwner } from './lock-owner';
import { LiveToken, sweepTokens } from './lock-token';

const held = new Set<string>();

/** How long acquiring may wait for another process's takeover to finish before giving up. */
const TAKEOVER_WAIT_MS = 5000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The file's text, or undefined when it does not exist. */
function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** LOCKED: who holds the store, and what to do. */
function lockedBy(dir: string, file: string, holder: Holder): StoreError {
  const { pid, pidns } = holder.owner;
  if (holder.checked) {
    // It answered: it runs, though maybe where its pid means something else.
    const where = pidns !== undefined && pidns !== thisOwner().pidns ? ' (in another PID namespace: a container or sandbox)' : '';
    return new StoreError('LOCKED', `The store at ${dir} is in use by process ${pid}${where}. Close that Arbor (or pass another --store) and retry.`, file);
  }
  return new StoreError(
    'LOCKED',
    `The store at ${dir} is in use by process ${pid} ${holder.where}, which this process cannot check. Close that Arbor (or pass another --store) and retry; if it is really gone, delete ${file} and retry.`,
    file,
  );
}

/** Create `target` holding `source`'s bytes, atomically and only if absent (a hard link). */
function createFrom(source: string, target: string): boolean {
  try {
    try {
      fs.linkSync(source, target);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw err;
      // No hard links here (FAT): an exclusive create, briefly empty before its pid is written.
      fs.writeFileSync(target, fs.readFileSync(source), { flag: 'wx' });
    }
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/**
 * One writer per store folder: `arbor.lock` holds the owner's pid, PID namespace, boot id, host
 * and liveness token (lock-owner.ts, lock-token.ts; a bare pid, as older versions wrote, is still
 * read). The token is this function's: made and listening before the lock names it, closed by
 * the release or when acquiring fails (none where tokens cannot be asked: not Linux). A lock left
 * by a process that no longer runs (a crash, kill -9) is taken over — atomically, so that two
 * processes finding the same stale lock (a VS Code window and the CLI) cannot both win
 * (decision 0019):
 * - every lock or guard file appears whole, by hard-linking a file already holding our pid
 *   (never created empty and then written, which a reader could take for a stale lock);
 * - only the holder of `arbor.lock.takeover-<stale content>`, created O_EXCL-like by the
 *   same link, may remove that stale lock, and only after reading it again under the guard;
 *   it then creates its own lock only if still absent. Everyone else retries and finds the
 *   winner alive: LOCKED, naming its pid. A guard whose holder died escalates to `.1`, `.2`…
 */
export async function acquireLock(dir: string): Promise<() => void> {
  const file = path.join(dir, 'arbor.lock');
  const key = path.resolve(file);
  if (held.has(key))
    throw new StoreError('LOCKED', `The store at ${dir} is already open in this process; share the open Store instead of opening it twice.`, file);
  held.add(key); // taken from here on: a second open in this process is refused while this one asks
  const mine = `${file}.${process.pid}.tmp`;
  let token: LiveToken | undefined;
  let myText = '';
  try {
    // The liveness token first: the lock names it from the moment it exists (lock-token.ts).
    token = await LiveToken.make(dir);
    myText = ownerText({ ...thisOwner(), ...(token ? { live: token.name } : {}) });
    fs.writeFileSync(mine, myText);
    const deadline = Date.now() + TAKEOVER_WAIT_MS;
    while (!createFrom(mine, file)) {
      const text = readText(file);
      if (text === undefined) {
        // Released meanwhile: try to create it again — unless a link with nothing behind it is in its place.
        if (isLink(file)) throw new StoreError('LOCKED', `The store's lock ${file} is a symbolic link to nothing; delete that link and retry.`, file);
        continue;
      }
      const holder = await liveHolder(text, dir);
      if (holder !== undefined) throw lockedBy(dir, file, holder);
      if (await takeOver(file, text, mine)) break;
      if (Date.now() > deadline)
        throw new StoreError(
          'LOCKED',
          `The store at ${dir} has a stale lock (${file}) that could not be taken over in ${TAKEOVER_WAIT_MS / 1000} s. If no Arbor uses this folder, delete that file and retry.`,
          file,
        );
      await sleep(5); // another process is taking it over: look again once it is done
    }
  } catch (err) {
    held.delete(key);
    token?.close();
    throw err;
  } finally {
    fs.rmSync(mine, { force: true });
  }
  // Tokens whose holders are gone: the stale lock's just taken over, and any left without their lock
  // (deleted by hand, a contender that died, an older Arbor's takeover).
  await sweepTokens(dir, token?.name);
  return () => {
    held.delete(key);
    try {
      if (readText(file) === myText) fs.rmSync(file, { force: true });
    } finally {
      token?.close();
    }
  };
}

function isLink(file: string): boolean {
  try {
    return fs.lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Replace the stale lock whose text was `stale` with ours; false when someone else got there first. */
async function takeOver(file: string, stale: string, mine: string): Promise<boolean> {
  const base = `${file}.takeover-${guardName(stale)}`;
  for (let level = 0; ; level++) {
    const guard = level === 0 ? base : `${base}.${level}`;
    if (!createFrom(mine, guard)) {
      const holder = readText(guard);
      if (holder === undefined) return false; // finished meanwhile: look at the lock again
      if ((await liveHolder(holder, path.dirname(file))) !== undefined) return false; // a takeover under way (or one we cannot check)
      continue; // its holder died mid-takeover: nobody holds it, so the next level is free
    }
    try {
      // Under the guard, only we may remove this stale lock: check it is still the one we saw.
      if (readText(file) !== stale) return false;
      fs.rmSync(file, { force: true });
      if (!createFrom(mine, file)) return false; // a fresh process created it meanwhile: it wins
      for (let dead = 0; dead < level; dead++) fs.rmSync(dead === 0 ? base : `${base}.${dead}`, { force: true });
      return true;
    } finally {
      fs.rmSync(guard, { force: true });
    }
  }
}

/** The stale lock's part of its takeover guard's name: every contender for the same stale lock picks the same guard. */
function guardName(stale: string): string {
  if (/^\d{1,12}$/.test(stale)) return stale; // an old lock: the name older versions use
  const owner = parseOwner(stale);
  return owner ? `${owner.pid}-${crc32(stale).toString(16)}` : 'unreadable';
}
