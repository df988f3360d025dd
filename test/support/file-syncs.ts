import * as fs from 'node:fs';

// Tests that hold, fail or count the disk's syncs replace a method of `FileHandle`'s prototype
// for the whole process (every store, journal and atomic write goes through it). One place
// finds the prototype, wraps the method and gives back what restores it, so a test's `finally`
// cannot restore the wrong function or forget one of two.

export type SyncMethod = 'sync' | 'datasync';
export type SyncFn = (this: fs.promises.FileHandle) => Promise<void>;

/** FileHandle's prototype, found through a handle opened (and closed) on this file. */
async function fileHandleProto(): Promise<Record<SyncMethod, SyncFn>> {
  const probe = await fs.promises.open(__filename, 'r');
  try {
    return Object.getPrototypeOf(probe) as Record<SyncMethod, SyncFn>;
  } finally {
    await probe.close();
  }
}

/** Replaces FileHandle's syncs; `replace` acts at once (a test may swap a method from inside a synchronous callback). */
export interface FileSyncs {
  /**
   * Every FileHandle's `method` becomes `wrap(original)` until the returned function is called
   * (idempotent). `original` is the method as it was, to call on `this` when the test lets it run.
   */
  replace(method: SyncMethod, wrap: (original: SyncFn) => SyncFn): () => void;
}

export async function fileSyncs(): Promise<FileSyncs> {
  const proto = await fileHandleProto();
  return {
    replace(method, wrap) {
      const original = proto[method];
      proto[method] = wrap(original);
      let restored = false;
      return () => {
        if (restored) return;
        restored = true;
        proto[method] = original;
      };
    },
  };
}

/** `fileSyncs().replace` in one step. */
export async function replaceSync(method: SyncMethod, wrap: (original: SyncFn) => SyncFn): Promise<() => void> {
  return (await fileSyncs()).replace(method, wrap);
}

/** Both of a FileHandle's syncs counted while `fn` runs. */
export async function countSyncs(fn: () => Promise<void>): Promise<number> {
  let n = 0;
  const counted = (original: SyncFn): SyncFn =>
    function (this: fs.promises.FileHandle) {
      n++;
      return original.call(this);
    };
  const restoreSync = await replaceSync('sync', counted);
  const restoreDatasync = await replaceSync('datasync', counted);
  try {
    await fn();
  } finally {
    restoreSync();
    restoreDatasync();
  }
  return n;
}
