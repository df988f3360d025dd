import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describeError } from '../errors';
import type { SandboxMode } from '../session/events';

// A confined remote child's own temp folder (decision 0122, amended s60). Codex's workspace-write
// writes the host's `/tmp` and `$TMPDIR` by default, where other programs of the user read what a
// child plants; Arbor's own confined commands get a private `/tmp`. So a Codex child (the `codex`
// provider, or an ACP agent on this machine) gets a folder of its own in the store — made empty,
// 0700, when its program starts, named by the child, removed once the program and its group are
// gone — as TMPDIR (and TMP, TEMP), and `codex exec` is told to leave `/tmp` read-only and keep
// TMPDIR writable. A crash's leftover is removed by recovery (`removePrivateTmp`) or by the next start.

/** The folder of a store's remote temp folders. */
export const privateTmpRoot = (storeDir: string): string => path.join(storeDir, 'remote-tmp');

/**
 * A child's folder: a short hash of its id (ids grow with depth; programs put sockets in TMPDIR,
 * whose paths may not pass 107 bytes), so the same child always gets the same one.
 */
export function privateTmpDir(storeDir: string, childId: string): string {
  return path.join(privateTmpRoot(storeDir), createHash('sha256').update(childId).digest('hex').slice(0, 16));
}

/** Whether a child in `sandbox` gets one: every confined child; a full-access child writes anywhere anyway. */
export const wantsPrivateTmp = (sandbox: SandboxMode): boolean => sandbox !== 'full-access';

export interface PrivateTmp {
  dir: string;
  /** TMPDIR, TMP and TEMP, each the folder (the child's commands may read any of them: Python's tempfile reads all three). */
  env: Record<'TMPDIR' | 'TMP' | 'TEMP', string>;
  /** Removes it and whatever the program left in it; never throws. */
  remove(): Promise<void>;
}

/** Makes the child's folder, empty and 0700; REMOTE_TMP when it cannot be made. */
export async function openPrivateTmp(storeDir: string, childId: string): Promise<PrivateTmp> {
  const dir = privateTmpDir(storeDir, childId);
  try {
    await fs.promises.mkdir(privateTmpRoot(storeDir), { recursive: true, mode: 0o700 });
    // A leftover of a crash (or a link planted there) goes: the program starts with an empty folder.
    await fs.promises.rm(dir, { recursive: true, force: true });
    await fs.promises.mkdir(dir, { mode: 0o700 });
    await fs.promises.chmod(dir, 0o700);
  } catch (err) {
    throw new Error(
      `REMOTE_TMP: Arbor could not make the child's private temp folder ${dir} (${describeError(err)}), so its program was not started. Make the session store's folder writable, or free space on its disk.`,
    );
  }
  return { dir, env: { TMPDIR: dir, TMP: dir, TEMP: dir }, remove: () => removePrivateTmp(storeDir, childId) };
}

/** Removes a child's folder (recovery after a crash; the end of its program); never throws. */
export async function removePrivateTmp(storeDir: string, childId: string): Promise<void> {
  await fs.promises.rm(privateTmpDir(storeDir, childId), { recursive: true, force: true, maxRetries: 2 }).catch(() => undefined);
}

/**
 * Codex's settings that leave the host's `/tmp` read-only and its TMPDIR (the private folder)
 * writable in workspace-write (`-c` keys of `codex exec`). Not sent to codex-acp: its per-turn
 * sandbox policy says `excludeSlashTmp: false` and wins over the config (checked with 2.6.0).
 */
export const CODEX_TMP_CONFIG = { exclude_slash_tmp: true, exclude_tmpdir_env_var: false } as const;
