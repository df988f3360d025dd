import * as fs from 'node:fs';
import { beneathSync } from '../beneath';
import { isWithin } from '../real-path';

// bwrap (in a resident sandbox, the zygote, in the command's namespaces) creates an empty
// directory on the host where a stand-in is mounted. It is removed when the last command of
// this process that stands on it ends (rmdir: only while empty, so a directory someone filled
// meanwhile stays). Counting users keeps one command's cleanup from pulling the stand-in out
// from under another command still running. The folder is removed through its parents opened
// from its root with no link followed (`beneathSync`): a command may have swapped a parent for a
// link meanwhile (a nested repository's hooks folder), and the host never removes an empty
// folder the link points at, outside the workspace.
export const shadowUsers = new Map<string, number>();

export function holdShadows(paths: readonly string[], roots: readonly string[]): () => void {
  for (const p of paths) shadowUsers.set(p, (shadowUsers.get(p) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    for (const p of paths) {
      const n = (shadowUsers.get(p) ?? 1) - 1;
      if (n > 0) {
        shadowUsers.set(p, n);
        continue;
      }
      shadowUsers.delete(p);
      try {
        const root = roots.find((r) => isWithin(p, r));
        beneathSync(p, root, (at) => fs.rmdirSync(at));
      } catch {
        // Not there (bwrap failed before mounting), not empty (someone made it real) or a parent
        // swapped for a link (PATH_CHANGED): leave it.
      }
    }
  };
}
