import * as fsp from 'node:fs/promises';
import { beneathOpenedSync } from '../beneath';
import { isWithin } from '../real-path';
import { register, unregister } from './stand-in-registry';

// bwrap (in a resident sandbox, the zygote, in the command's namespaces) creates an empty
// directory on the host where a stand-in is mounted. It is removed when the last command of
// this process that stands on it ends (rmdir: only while empty, so a directory someone filled
// meanwhile stays). Counting users keeps one command's cleanup from pulling the stand-in out
// from under another command still running. The folder is removed through its parents opened
// from its root with no link followed (`beneath.ts`): a command may have swapped a parent for a
// link meanwhile (a nested repository's hooks folder), and the host never removes an empty
// folder the link points at, outside the workspace. Other Arbor processes of this user may stand
// on the same folder (the extension and a CLI on one workspace): the registry across processes
// (`stand-in-registry.ts`) removes it only when none does, since removing it dissolves their
// commands' mounts on it too.
//
// A command's stand-ins are removed together, in parallel (an rmdir on a disk mounted with
// `discard` waits for the device), and the release resolves once they are gone. While they are
// being removed they still count as this process's stand-ins (their count stays at one), so a
// walk meanwhile sees a stand-in, not a folder of the workspace to mount read-only (one the removal
// would dissolve under that command); and a command that stands on one of them waits for its
// removal before its own is made.
export const shadowUsers = new Map<string, number>();
/** The stand-ins this process said it stands on in the registry: only those may be removed. */
const registered = new Set<string>();
/** The stand-ins being removed now, and when that is done. */
const removing = new Map<string, Promise<void>>();

/** Stand on each of `paths` for one command; the result releases them (resolving once the last users' folders are removed). */
export async function holdShadows(paths: readonly string[], roots: readonly string[]): Promise<() => Promise<void>> {
  // A folder being removed is made again by this command once it is gone (never mounted while the removal runs).
  for (let pending = waitingOn(paths); pending.length > 0; pending = waitingOn(paths)) await Promise.all(pending);
  const first: string[] = [];
  for (const p of paths) {
    const n = (shadowUsers.get(p) ?? 0) + 1;
    shadowUsers.set(p, n);
    if (n === 1) first.push(p);
  }
  for (const p of await register(first)) registered.add(p);
  let released: Promise<void> | undefined;
  return () => {
    released ??= release(paths, roots);
    return released;
  };
}

/** The removals `paths` wait on. */
function waitingOn(paths: readonly string[]): Promise<void>[] {
  const out: Promise<void>[] = [];
  for (const p of paths) {
    const r = removing.get(p);
    if (r) out.push(r);
  }
  return out;
}

async function release(paths: readonly string[], roots: readonly string[]): Promise<void> {
  const last: string[] = [];
  for (const p of paths) {
    const n = (shadowUsers.get(p) ?? 1) - 1;
    if (n > 0) {
      shadowUsers.set(p, n);
      continue;
    }
    // One this process could not register is left in place: another process may stand on it.
    if (registered.has(p)) last.push(p);
    else shadowUsers.delete(p);
  }
  if (last.length === 0) return;
  // Not there (bwrap failed before mounting), not empty (someone made it real) or a parent
  // swapped for a link (PATH_CHANGED): the registry leaves it.
  const done = unregister(last, (p) =>
    beneathOpenedSync(
      p,
      roots.find((r) => isWithin(p, r)),
      (at) => fsp.rmdir(at),
    ),
  )
    // The registry could not be read or locked: the folders stay in place, as when its lock is busy for 2 s.
    .catch(() => undefined)
    .finally(() => {
      for (const p of last) {
        removing.delete(p);
        registered.delete(p);
        shadowUsers.delete(p);
      }
    });
  for (const p of last) removing.set(p, done);
  return done;
}
