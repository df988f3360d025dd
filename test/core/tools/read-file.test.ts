import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createReadFileTool } from '../../../src/core/tools/read-file';
import { call, makeWorkspace, type Workspace } from './fixture';

describe('read_file', () => {
  let ws: Workspace;
  beforeEach(() => {
    ws = makeWorkspace();
  });
  afterEach(() => ws.cleanup());
  const tool = createReadFileTool();

  it('returns the whole file as numbered lines', async () => {
    ws.write('src/a.ts', 'one\ntwo\nthree\n');
    const r = await call(tool, { path: 'src/a.ts' }, ws.ctx());
    assert.deepEqual(r, { isError: false, content: '1\tone\n2\ttwo\n3\tthree' });
  });

  it('returns an inclusive 1-based range and says where it is in the file', async () => {
    ws.write('f.txt', 'a\nb\nc\nd\ne');
    const r = await call(tool, { path: 'f.txt', startLine: 2, endLine: 3 }, ws.ctx());
    assert.equal(r.content, '2\tb\n3\tc\n\n[Lines 2–3 of 5.]');
    const tail = await call(tool, { path: 'f.txt', startLine: 4 }, ws.ctx());
    assert.equal(tail.content, '4\td\n5\te\n\n[Lines 4–5 of 5.]');
    const past = await call(tool, { path: 'f.txt', endLine: 99 }, ws.ctx());
    assert.equal(past.content, '1\ta\n2\tb\n3\tc\n4\td\n5\te');
  });

  it('keeps CRLF files readable (no stray \\r)', async () => {
    ws.write('w.txt', 'x\r\ny\r\n');
    assert.equal((await call(tool, { path: 'w.txt' }, ws.ctx())).content, '1\tx\n2\ty');
  });

  it('refuses a range that starts past the end, or ends before it starts', async () => {
    ws.write('f.txt', 'a\nb');
    const past = await call(tool, { path: 'f.txt', startLine: 5 }, ws.ctx());
    assert.equal(past.isError, true);
    assert.match(past.content, /startLine 5 is past the end of 'f\.txt', which has 2 lines/);
    const inverted = await call(tool, { path: 'f.txt', startLine: 2, endLine: 1 }, ws.ctx());
    assert.match(inverted.content, /endLine \(1\) is before startLine \(2\)/);
  });

  it('caps long output by lines and by bytes, saying how to read on', async () => {
    ws.write('big.txt', Array.from({ length: 50 }, (_, i) => `line ${i + 1}`).join('\n'));
    const byLines = await call(createReadFileTool({ maxLines: 10 }), { path: 'big.txt' }, ws.ctx());
    assert.equal(byLines.isError, false);
    assert.equal(byLines.content.split('\n\n')[0].split('\n').length, 10);
    assert.match(byLines.content, /\[Output cut at 10 lines: showing lines 1–10 of 50\. Call read_file with startLine: 11 to read on\.\]$/);
    const byBytes = await call(createReadFileTool({ maxBytes: 40 }), { path: 'big.txt', startLine: 20 }, ws.ctx());
    assert.match(
      byBytes.content,
      /^20\tline 20\n21\tline 21\n22\tline 22\n\n\[Output cut at 40 bytes: showing lines 20–22 of 50\. Call read_file with startLine: 23/,
    );
  });

  it('cuts very long lines and says so', async () => {
    ws.write('min.js', 'x'.repeat(5000));
    const r = await call(createReadFileTool({ maxLineLength: 100 }), { path: 'min.js' }, ws.ctx());
    assert.match(r.content, /^1\tx{100}… \[line cut: 5000 characters\]/);
    assert.match(r.content, /\[1 long line\(s\) cut at 100 characters\.\]/);
  });

  it('answers empty, missing, directory and binary files with clear results', async () => {
    ws.write('empty.txt', '');
    assert.deepEqual(await call(tool, { path: 'empty.txt' }, ws.ctx()), { isError: false, content: '(empty.txt is empty)' });
    const missing = await call(tool, { path: 'nope.txt' }, ws.ctx());
    assert.equal(missing.code, 'NOT_FOUND');
    assert.match(missing.content, /^read_file: 'nope\.txt' does not exist\. Use list_files/);
    fs.mkdirSync(ws.at('dir'));
    assert.match((await call(tool, { path: 'dir' }, ws.ctx())).content, /is a directory; use list_files/);
    fs.writeFileSync(ws.at('img.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1, 2]));
    const bin = await call(tool, { path: 'img.png' }, ws.ctx());
    assert.equal(bin.code, 'BINARY_FILE');
    assert.match(bin.content, /binary file \(8 bytes\)/);
  });

  it('reads through a symlink inside the workspace, refuses one that leads outside', async () => {
    ws.write('real.txt', 'inside');
    fs.symlinkSync('real.txt', ws.at('alias.txt'));
    assert.equal((await call(tool, { path: 'alias.txt' }, ws.ctx())).content, '1\tinside');
    fs.writeFileSync(path.join(ws.outside, 'secret.txt'), 'secret');
    fs.symlinkSync(path.join(ws.outside, 'secret.txt'), ws.at('leak.txt'));
    const leak = await call(tool, { path: 'leak.txt' }, ws.ctx({ sandbox: 'read-only' }));
    assert.equal(leak.code, 'OUTSIDE_WORKSPACE');
    assert.doesNotMatch(leak.content, /secret$/m);
  });

  it('reads outside the workspace only in full-access', async () => {
    fs.writeFileSync(path.join(ws.outside, 'o.txt'), 'out');
    const refused = await call(tool, { path: '../outside/o.txt' }, ws.ctx());
    assert.equal(refused.code, 'OUTSIDE_WORKSPACE');
    const allowed = await call(tool, { path: '../outside/o.txt' }, ws.ctx({ sandbox: 'full-access' }));
    assert.equal(allowed.content, '1\tout');
  });

  it('returns a cancelled result when the signal is already aborted', async () => {
    ws.write('f.txt', 'a');
    const ac = new AbortController();
    ac.abort();
    const r = await call(tool, { path: 'f.txt' }, ws.ctx({ signal: ac.signal }));
    assert.equal(r.code, 'CANCELLED');
  });
});
