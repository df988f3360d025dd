import * as fs from 'node:fs';
import { beneathSync } from '../beneath';
import { isWithin } from '../real-path';
import { register, unregister } from './stand-in-registry';

// bwrap (in a resident sandbox, the zygote, in the command's namespaces) creates an empty
// directory on the host where a stand-in is mounted. It is removed when the last command of
// this process that stands on it ends (rmdir: only while empty, so a directory someone filled
// meanwhile stays). Counting users keeps one command's cleanup from pulling the stand-in out
// from under another command still running. The folder is removed through its parents opened
// from its root with no link followed (`beneathSync`): a command may have swapped a parent for a
// link meanwhile (a nested repository's hooks folder), and the host never removes an empty
// folder the link points at, outside the workspace. Other Arbor processes of this user may stand
// on the same folder (the extension and a CLI on one workspace): the registry across processes
// (`stand-in-registry.ts`) removes it only when none does, since removing it dissolves their
// commands' mounts on it too.
export const shadowUsers = new Map<string, number>();
/** The stand-ins this process said it stands on in the registry: only those may be removed. */
const registered = new Set<string>();

export function holdShadows(paths: readonly string[], roots: readonly string[]): () => void {
  const first: string[] = [];
  for (const p of paths) {
    const n = (shadowUsers.get(p) ?? 0) + 1;
    shadowUsers.set(p, n);
    if (n === 1) first.push(p);
  }
  for (const p of register(first)) registered.add(p);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const last: string[] = [];
    for (const p of paths) {
      const n = (shadowUsers.get(p) ?? 1) - 1;
      if (n > 0) {
        shadowUsers.set(p, n);
        continue;
      }
      shadowUsers.delete(p);
      // One this process could not register is left in place: another process may stand on it.
      if (registered.delete(p)) last.push(p);
    }
    // Not there (bwrap failed before mounting), not empty (someone made it real) or a parent
    // swapped for a link (PATH_CHANGED): the registry leaves it.
    unregister(last, (p) =>
      beneathSync(
        p,
        roots.find((r) => isWithin(p, r)),
        (at) => fs.rmdirSync(at),
      ),
    );
  };
}
