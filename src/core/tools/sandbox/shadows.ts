import * as fs from 'node:fs';

// bwrap creates an empty directory on the host where a stand-in is mounted. It is removed
// when the last command of this process that stands on it ends (rmdir: only while empty, so
// a directory someone filled meanwhile stays). Counting users keeps one command's cleanup
// from pulling the stand-in out from under another command still running.
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

/**
 * Make each stand-in's empty folder on the host (bubblewrap does it for a command of its own; a
 * resident sandbox's command gets them made here). One already there is shared; the zygote refuses
 * to run a command whose stand-in it cannot mount (something not a folder stands there).
 */
export function makeShadows(paths: readonly string[]): readonly string[] {
  for (const p of paths) {
    try {
      fs.mkdirSync(p);
    } catch {
      // There already (another command's), or its folder is gone: the zygote's mount says which.
    }
  }
  return paths;
}
