import * as fs from 'node:fs';

// bwrap (in a resident sandbox, the zygote, in the command's namespaces) creates an empty
// directory on the host where a stand-in is mounted. It is removed when the last command of
// this process that stands on it ends (rmdir: only while empty, so a directory someone filled
// meanwhile stays). Counting users keeps one command's cleanup from pulling the stand-in out
// from under another command still running.
export const shadowUsers = new Map<string, number>();

export function holdShadows(paths: readonly string[]): () => void {
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
        fs.rmdirSync(p);
      } catch {
        // Not there (bwrap failed before mounting) or not empty (someone made it real): leave it.
      }
    }
  };
}
