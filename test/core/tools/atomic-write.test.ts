import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { createEditFileTool } from '../../../src/core/tools/edit-file';
import { createWriteFileTool } from '../../../src/core/tools/write-file';
import { call, makeWorkspace, type Workspace } from './fixture';
import { diskMode, fullDiskOps, makeSmallDisk } from './full-disk';

// Issue 10.3: a write goes to a temp file in the same folder, is fsynced and renamed over the
// original; when the disk is full the original stays whole and the error says so. The disk:
// 64 KB, 28 KB taken by another file and 32 KB by the file to change, so neither writing in
// place nor writing a copy of 48 KB fits.
describe(`write_file / edit_file on a full disk (issue 10.3; ${diskMode.why})`, () => {
  let ws: Workspace;
  let undo: () => void;
  const original = `${'original line\n'.repeat(2339)}last line\n`; // 32,756 bytes
  const bigger = 'x'.repeat(48 * 1024);
  beforeEach(() => {
    ws = makeWorkspace();
    undo = makeSmallDisk(ws.root);
    ws.write('filler.bin', 'f'.repeat(28 * 1024));
    ws.write('data.txt', original);
  });
  afterEach(() => {
    undo();
    ws.cleanup();
  });
  const leftovers = () => fs.readdirSync(ws.root).filter((n) => n !== 'filler.bin' && n !== 'data.txt');

  it('write_file leaves the original whole, says the disk is full and that the file was left as it was', async () => {
    const r = await call(createWriteFileTool({ writeOps: fullDiskOps() }), { path: 'data.txt', content: bigger }, ws.ctx());
    assert.equal(r.isError, true, r.content);
    assert.equal(r.code, 'IO_ERROR');
    assert.equal(r.content, "write_file: cannot write 'data.txt': no space left on the device; 'data.txt' was left as it was");
    assert.ok(ws.read('data.txt') === original, 'the original is whole');
    assert.deepEqual(leftovers(), [], 'no temp file is left behind');
  });

  it('edit_file leaves the original whole too (it used to truncate it)', async () => {
    const e = await call(createEditFileTool({ writeOps: fullDiskOps() }), { path: 'data.txt', oldText: 'last line', newText: bigger }, ws.ctx());
    assert.equal(e.isError, true, e.content);
    assert.equal(e.content, "edit_file: cannot write 'data.txt': no space left on the device; 'data.txt' was left as it was");
    assert.ok(ws.read('data.txt') === original, 'the original is whole');
    assert.deepEqual(leftovers(), []);
  });

  it('full-access write_file of a hard-linked file (written in place) leaves it whole under both names too', async function () {
    if (diskMode.mode !== 'tmpfs') this.skip(); // the in-place write goes through node:fs itself: only a real small disk fills
    fs.linkSync(ws.at('data.txt'), ws.at('twin.txt'));
    const r = await call(createWriteFileTool({ writeOps: fullDiskOps() }), { path: 'data.txt', content: bigger }, ws.ctx({ sandbox: 'full-access' }));
    assert.equal(r.isError, true, r.content);
    assert.equal(r.content, "write_file: cannot write 'data.txt': no space left on the device; 'data.txt' was left as it was");
    assert.ok(ws.read('data.txt') === original, 'the original is whole (it was truncated, then written part way)');
    assert.ok(ws.read('twin.txt') === original, 'and so is its other name');
    assert.equal(fs.statSync(ws.at('data.txt')).ino, fs.statSync(ws.at('twin.txt')).ino, 'still one file');
  });

  it('write_file of a new file creates nothing', async () => {
    const r = await call(createWriteFileTool({ writeOps: fullDiskOps() }), { path: 'new.txt', content: bigger }, ws.ctx());
    assert.equal(r.content, "write_file: cannot write 'new.txt': no space left on the device; nothing was created");
    assert.deepEqual(leftovers(), []);
  });
});

describe('write_file / edit_file replace the file whole (issue 10.3)', () => {
  let ws: Workspace;
  beforeEach(() => {
    ws = makeWorkspace();
  });
  afterEach(() => ws.cleanup());

  it('a reader that opened the file before the write still reads the old bytes: the new ones are a new file renamed over it', async () => {
    const p = ws.write('f.txt', 'old content\n');
    fs.chmodSync(p, 0o640);
    const before = fs.statSync(p);
    const fd = fs.openSync(p, 'r');
    try {
      const r = await call(createEditFileTool(), { path: 'f.txt', oldText: 'old', newText: 'new' }, ws.ctx());
      assert.equal(r.isError, false, r.content);
      const buf = Buffer.alloc(64);
      const n = fs.readSync(fd, buf, 0, 64, 0);
      assert.equal(buf.subarray(0, n).toString(), 'old content\n', 'never truncated in place');
    } finally {
      fs.closeSync(fd);
    }
    const after = fs.statSync(p);
    assert.equal(ws.read('f.txt'), 'new content\n');
    assert.notEqual(after.ino, before.ino);
    assert.equal(after.mode & 0o7777, 0o640, 'the mode is kept');
    assert.deepEqual(fs.readdirSync(ws.root), ['f.txt'], 'no temp file is left');
  });
});
