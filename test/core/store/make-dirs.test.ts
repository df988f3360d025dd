import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { makeDirs } from '../../../src/core/store/fsutil';
import { Store } from '../../../src/core/store/store';

/** Settles within `ms`, or says it did not (Node's recursive mkdir under /proc never does). */
const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([
    p.then(
      (v) => ({ v }),
      (e: unknown) => ({ e: e as NodeJS.ErrnoException }),
    ),
    new Promise<'pending'>((r) => setTimeout(() => r('pending'), ms)),
  ]);

describe('store: makeDirs, mkdir -p without the recursive mode that never returns under /proc', () => {
  let dir = '';
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-mkdirs-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('makes every missing folder, and a folder already there is fine', async () => {
    const deep = path.join(dir, 'a', 'b', 'c');
    await makeDirs(deep);
    assert.ok(fs.statSync(deep).isDirectory());
    await makeDirs(deep);
    await makeDirs(dir);
  });

  it('a file in the way is ENOTDIR; a folder of procfs answers ENOENT at once', async () => {
    fs.writeFileSync(path.join(dir, 'f'), '');
    assert.equal(((await within(makeDirs(path.join(dir, 'f', 'x')), 5000)) as { e?: NodeJS.ErrnoException }).e?.code, 'ENOTDIR');
    assert.equal(((await within(makeDirs('/proc/arbor-test/x'), 5000)) as { e?: NodeJS.ErrnoException }).e?.code, 'ENOENT');
  });

  it('a store there is refused in words (IO), not an open that never returns', async () => {
    const r = await within(Store.open('/proc/arbor-test/store'), 5000);
    assert.notEqual(r, 'pending');
    const e = (r as { e?: { code?: string; message: string } }).e;
    assert.equal(e?.code, 'IO');
    assert.match(e!.message, /cannot be made .*--store/);
  });
});
