import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { inFolder } from '../../../src/core/tools/beneath';
import { ATOMIC_TEMP_SUFFIX } from '../../../src/core/tools/fsio';
import { writeAtomicBatch, writtenBy } from '../../../src/core/tools/write-batch';
import { diskMode, makeSmallDisk } from './full-disk';

// The batch a rewind writes its files with (write-batch.ts): the same guarantees as one
// `writeAtomic` per file, plus all or nothing before the renames. Tried as an attacker would: a
// link planted where a file was, a file that is really a folder, a folder swapped for a link.
describe('writeAtomicBatch: many files of one folder replaced atomically at once', () => {
  let root: string;
  let dir: string;
  beforeEach(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-batch-')));
    dir = path.join(root, 'src');
    fs.mkdirSync(dir);
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  const at = (name: string) => path.join(dir, name);
  const batch = (items: { name: string; text: string }[]) =>
    inFolder(dir, root, true, async (folder) => {
      await writeAtomicBatch(
        folder,
        items.map((i) => ({ realPath: at(i.name), data: Buffer.from(i.text) })),
        root,
      );
      await folder?.sync();
    });
  const temps = () => fs.readdirSync(dir).filter((n) => n.endsWith(ATOMIC_TEMP_SUFFIX));

  it('writes every file, new or existing, keeps each mode, and leaves no temp file', async () => {
    fs.writeFileSync(at('a.sh'), 'old a\n', { mode: 0o750 });
    fs.chmodSync(at('a.sh'), 0o750);
    fs.writeFileSync(at('b.txt'), 'old b\n');
    fs.chmodSync(at('b.txt'), 0o640);
    const inodeA = fs.statSync(at('a.sh')).ino;
    await batch([
      { name: 'a.sh', text: 'new a\n' },
      { name: 'b.txt', text: 'new b\n' },
      { name: 'c.txt', text: 'new c\n' },
    ]);
    assert.equal(fs.readFileSync(at('a.sh'), 'utf8'), 'new a\n');
    assert.equal(fs.readFileSync(at('b.txt'), 'utf8'), 'new b\n');
    assert.equal(fs.readFileSync(at('c.txt'), 'utf8'), 'new c\n');
    assert.equal(fs.statSync(at('a.sh')).mode & 0o777, 0o750);
    assert.equal(fs.statSync(at('b.txt')).mode & 0o777, 0o640);
    assert.notEqual(fs.statSync(at('a.sh')).ino, inodeA, 'replaced by a rename, never rewritten in place');
    assert.deepEqual(temps(), []);
  });

  it('a reader that opened a file before the batch still reads its old bytes', async () => {
    fs.writeFileSync(at('a.txt'), 'old\n');
    const fd = fs.openSync(at('a.txt'), 'r');
    try {
      await batch([{ name: 'a.txt', text: 'new\n' }]);
      assert.equal(fs.readFileSync(fd, 'utf8'), 'old\n');
      assert.equal(fs.readFileSync(at('a.txt'), 'utf8'), 'new\n');
    } finally {
      fs.closeSync(fd);
    }
  });

  it('a link planted where a file was is refused, never followed, and nothing of the batch is renamed', async () => {
    const outside = path.join(root, 'outside.txt');
    fs.writeFileSync(outside, 'secret\n');
    fs.writeFileSync(at('a.txt'), 'old a\n');
    fs.symlinkSync(outside, at('b.txt'));
    fs.writeFileSync(at('c.txt'), 'old c\n');
    await assert.rejects(
      batch([
        { name: 'a.txt', text: 'new a\n' },
        { name: 'b.txt', text: 'through the link\n' },
        { name: 'c.txt', text: 'new c\n' },
      ]),
      (e: NodeJS.ErrnoException) => e.code === 'ELOOP',
    );
    assert.equal(fs.readFileSync(outside, 'utf8'), 'secret\n');
    assert.equal(fs.lstatSync(at('b.txt')).isSymbolicLink(), true);
    assert.equal(fs.readFileSync(at('a.txt'), 'utf8'), 'old a\n', 'the file before the refused one was not renamed either');
    assert.equal(fs.readFileSync(at('c.txt'), 'utf8'), 'old c\n');
    assert.deepEqual(temps(), []);
  });

  it('a folder where a file was is refused (ENOTFILE) with nothing renamed and no temp file left', async () => {
    fs.writeFileSync(at('a.txt'), 'old a\n');
    fs.mkdirSync(at('b.txt'));
    await assert.rejects(
      batch([
        { name: 'a.txt', text: 'new a\n' },
        { name: 'b.txt', text: 'x\n' },
      ]),
      (e: NodeJS.ErrnoException) => e.code === 'ENOTFILE',
    );
    assert.equal(fs.readFileSync(at('a.txt'), 'utf8'), 'old a\n');
    assert.deepEqual(temps(), []);
  });

  it(`a full disk part way (${diskMode.why}): nothing of the batch is renamed, every original stays whole, no temp file is left`, async function () {
    if (diskMode.mode !== 'tmpfs') this.skip(); // the batch writes through node:fs itself: only a real small disk can fill
    const undo = makeSmallDisk(dir);
    try {
      fs.writeFileSync(at('filler.bin'), 'f'.repeat(28 * 1024));
      fs.writeFileSync(at('a.txt'), 'old a\n');
      fs.writeFileSync(at('b.txt'), 'old b\n');
      await assert.rejects(
        batch([
          { name: 'a.txt', text: 'new a\n' },
          { name: 'b.txt', text: 'x'.repeat(48 * 1024) },
        ]),
        (e: NodeJS.ErrnoException) => e.code === 'ENOSPC',
      );
      assert.equal(fs.readFileSync(at('a.txt'), 'utf8'), 'old a\n', 'the file that fit was not renamed either');
      assert.equal(fs.readFileSync(at('b.txt'), 'utf8'), 'old b\n');
      assert.deepEqual(temps(), []);
    } finally {
      undo();
    }
  });

  it('a folder put where a file was while the fsyncs run: the files renamed before it are reported, the rest left, no temp file', async () => {
    for (const n of ['a', 'b', 'c']) fs.writeFileSync(at(`${n}.txt`), `old ${n}\n`);
    let caught: unknown;
    await inFolder(dir, root, true, async (folder) => {
      const pending = writeAtomicBatch(
        folder,
        ['a', 'b', 'c'].map((n) => ({ realPath: at(`${n}.txt`), data: Buffer.from(`new ${n}\n`) })),
        root,
      );
      // The temp files are made before the batch first waits (on its fsyncs): swap b for a folder now.
      fs.rmSync(at('b.txt'));
      fs.mkdirSync(at('b.txt'));
      fs.writeFileSync(path.join(at('b.txt'), 'inside'), 'x');
      caught = await pending.then(
        () => undefined,
        (e: unknown) => e,
      );
    });
    assert.equal((caught as NodeJS.ErrnoException | undefined)?.code, 'EISDIR');
    assert.deepEqual(writtenBy(caught), [at('a.txt')], 'what was written before the failure is reported');
    assert.equal(fs.readFileSync(at('a.txt'), 'utf8'), 'new a\n');
    assert.equal(fs.readFileSync(path.join(at('b.txt'), 'inside'), 'utf8'), 'x', 'the folder is untouched');
    assert.equal(fs.readFileSync(at('c.txt'), 'utf8'), 'old c\n', 'nothing after the failure is renamed');
    assert.deepEqual(temps(), []);
  });

  it('a file with another name is written in place, so both names keep showing the same bytes', async () => {
    fs.writeFileSync(at('a.txt'), 'old\n');
    fs.linkSync(at('a.txt'), at('twin.txt'));
    await batch([
      { name: 'a.txt', text: 'new\n' },
      { name: 'b.txt', text: 'b\n' },
    ]);
    assert.equal(fs.readFileSync(at('twin.txt'), 'utf8'), 'new\n');
    assert.equal(fs.statSync(at('a.txt')).ino, fs.statSync(at('twin.txt')).ino);
    assert.equal(fs.readFileSync(at('b.txt'), 'utf8'), 'b\n');
    assert.deepEqual(temps(), []);
  });

  it('a folder swapped for a link after it was pinned: the batch still writes the real folder, not the link', async () => {
    const elsewhere = path.join(root, 'elsewhere');
    fs.mkdirSync(elsewhere);
    await inFolder(dir, root, true, async (folder) => {
      assert.ok(folder, 'a folder is pinned on Linux');
      fs.renameSync(dir, path.join(root, 'moved'));
      fs.symlinkSync(elsewhere, dir);
      await writeAtomicBatch(folder, [{ realPath: at('a.txt'), data: Buffer.from('new\n') }], root);
    });
    assert.deepEqual(fs.readdirSync(elsewhere), []);
    assert.equal(fs.readFileSync(path.join(root, 'moved', 'a.txt'), 'utf8'), 'new\n');
  });
});
