import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readWhole } from '../../../src/core/store/fsutil';
import { prng, tempDir } from '../../support/store-fixtures';

// readWhole (decision 0104) replaces fs.promises.readFile where a store file is opened: the
// same bytes whatever the size (one read, where readFile takes 512 KiB at a time), undefined
// for a file that is not there, and readFile's error for anything else.

describe('store: readWhole', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir();
  });
  afterEach(() => tmp.remove());

  it('reads the same bytes as readFile, empty and past one 512 KiB chunk alike', async () => {
    const rnd = prng(7);
    for (const size of [0, 1, 4095, 4096, 512 * 1024, 512 * 1024 + 1, 5 * 1024 * 1024 + 17]) {
      const file = path.join(tmp.dir, `f-${size}`);
      fs.writeFileSync(file, Buffer.from(Array.from({ length: size }, () => Math.floor(rnd() * 256))));
      const got = await readWhole(file);
      assert.ok(got, `${size} bytes read`);
      assert.equal(got.length, size);
      assert.ok(got.equals(await fs.promises.readFile(file)), `${size} bytes, same as readFile`);
      assert.equal(got.byteOffset, 0, 'its own memory, not a slice of a shared pool');
    }
  });

  it('says undefined for a missing file and a dangling link, and throws what readFile throws otherwise', async () => {
    assert.equal(await readWhole(path.join(tmp.dir, 'missing')), undefined);
    fs.symlinkSync(path.join(tmp.dir, 'nowhere'), path.join(tmp.dir, 'dangling'));
    assert.equal(await readWhole(path.join(tmp.dir, 'dangling')), undefined);
    const dir = path.join(tmp.dir, 'a-folder');
    fs.mkdirSync(dir);
    const expected = await fs.promises.readFile(dir).then(
      () => undefined,
      (err: NodeJS.ErrnoException) => err.code,
    );
    await assert.rejects(readWhole(dir), (err: NodeJS.ErrnoException) => err.code === expected);
  });
});
