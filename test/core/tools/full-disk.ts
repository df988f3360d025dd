// A full disk for the write tools: a real 64 KB tmpfs mounted over the workspace root when
// this process may mount (root on Linux), else the same failure (ENOSPC after part of the
// data) simulated through the tools' `writeOps` seam. The mode is in the suite's title.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { realWriteOps, type WriteOps } from '../../../src/core/tools/fsio';

export type DiskMode = 'tmpfs' | 'seam';

function mount(dir: string, size: string): void {
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
}

export function unmount(dir: string): void {
  execFileSync('umount', [dir], { stdio: 'ignore' });
}

/** Whether a tmpfs can be mounted here, tried once on a scratch folder. */
export const diskMode: { mode: DiskMode; why: string } = (() => {
  if (process.env.ARBOR_TEST_DISK === 'seam') return { mode: 'seam', why: 'ARBOR_TEST_DISK=seam: ENOSPC simulated through writeOps' };
  if (process.platform !== 'linux') return { mode: 'seam', why: `no tmpfs on ${process.platform}: ENOSPC simulated through writeOps` };
  const probe = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-tmpfs-probe-'));
  try {
    mount(probe, '64k');
    unmount(probe);
    return { mode: 'tmpfs', why: 'a real 64 KB tmpfs' };
  } catch (e) {
    return { mode: 'seam', why: `cannot mount a tmpfs (${(e as Error).message.split('\n')[0]}): ENOSPC simulated through writeOps` };
  } finally {
    fs.rmSync(probe, { recursive: true, force: true });
  }
})();

/**
 * Make `root` (an empty folder) a 64 KB disk in tmpfs mode; returns the undo. In seam mode
 * the folder stays as it is and `fullDiskOps` does the failing.
 */
export function makeSmallDisk(root: string): () => void {
  if (diskMode.mode !== 'tmpfs') return () => undefined;
  mount(root, '64k');
  return () => unmount(root);
}

/** Write ops for the tools: the real ones on a tmpfs; on the seam, every data write fails with ENOSPC after 1000 bytes. */
export function fullDiskOps(): WriteOps {
  if (diskMode.mode === 'tmpfs') return realWriteOps;
  return {
    ...realWriteOps,
    async open(file, flags, mode) {
      const fh = await realWriteOps.open(file, flags, mode);
      return new Proxy(fh, {
        get(target, prop, receiver) {
          if (prop === 'writeFile') {
            return async (data: string) => {
              await target.write(Buffer.from(data).subarray(0, 1000));
              throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
            };
          }
          const v = Reflect.get(target, prop, receiver);
          return typeof v === 'function' ? v.bind(target) : v;
        },
      });
    },
  };
}

/** Fill the disk under `dir` (tmpfs mode) with one file of 4 KB pages until it answers ENOSPC. */
export function fillDisk(dir: string): void {
  const filler = fs.openSync(path.join(dir, 'filler.bin'), 'w');
  try {
    for (;;) fs.writeSync(filler, Buffer.alloc(4096, 1));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  } finally {
    fs.closeSync(filler);
  }
}
