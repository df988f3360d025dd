import * as fs from 'node:fs';
import * as path from 'node:path';
import { StoreError } from './errors';

const held = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * One writer per store folder: `arbor.lock` holds the owner's pid. A lock left by a
 * process that no longer runs (a crash, kill -9) is taken over.
 */
export function acquireLock(dir: string): () => void {
  const file = path.join(dir, 'arbor.lock');
  const key = path.resolve(file);
  if (held.has(key)) throw new StoreError('LOCKED', `The store at ${dir} is already open in this process; share the open Store instead of opening it twice.`, file);
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 2) throw err;
      const owner = Number.parseInt(fs.readFileSync(file, 'utf8'), 10);
      if (Number.isSafeInteger(owner) && owner !== process.pid && alive(owner))
        throw new StoreError('LOCKED', `The store at ${dir} is in use by process ${owner}. Close that Arbor (or pass another --store) and retry.`, file);
      fs.rmSync(file, { force: true });
    }
  }
  held.add(key);
  return () => {
    held.delete(key);
    fs.rmSync(file, { force: true });
  };
}
