import * as fs from 'node:fs';
import * as path from 'node:path';

// Where `arbor-zygote` (native/zygote.c and confine.c, decision 0103) is: built by `scripts/build-zygote.mjs`
// into dist/, found beside the bundles there and from the compiled tree (out/src/core/tools/sandbox/).
// `ARBOR_ZYGOTE=off` turns resident sandboxes off (every command gets a bubblewrap of its own);
// `ARBOR_ZYGOTE=<path>` names another binary.

const NAME = 'arbor-zygote';

let found: string | null | undefined;

/** The zygote binary, or undefined when there is none here (not Linux, not built, or turned off). */
export function zygotePath(): string | undefined {
  if (found !== undefined) return found ?? undefined;
  const env = process.env.ARBOR_ZYGOTE;
  const candidates = env ? (env === 'off' ? [] : [env]) : [path.join(__dirname, NAME), path.join(__dirname, '..', '..', '..', '..', '..', 'dist', NAME)];
  found = process.platform === 'linux' ? (candidates.find(executable) ?? null) : null;
  return found ?? undefined;
}

function executable(p: string): boolean {
  try {
    if (!fs.statSync(p).isFile()) return false;
  } catch {
    return false;
  }
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    // An archive that lost the mode bits (an installed .vsix): it is ours, make it runnable again.
    try {
      fs.chmodSync(p, 0o755);
      return true;
    } catch {
      return false;
    }
  }
}
