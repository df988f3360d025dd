import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { createEditFileTool } from '../../../src/core/tools/edit-file';
import { createReadFileTool } from '../../../src/core/tools/read-file';
import { createSearchFilesTool } from '../../../src/core/tools/search-files';
import { call, makeWorkspace, type Workspace } from './fixture';

// Issue 10.6: big files cannot crash or stall a tool. The files are sparse (`truncate`
// extends them with holes): 1.5 GB that cost no disk. What a call read is measured in
// bytes through /proc/self/io (`rchar`, bytes the process got from read calls), not time.
const GB = 1024 ** 3;

function bytesReadBy<T>(fn: () => Promise<T>): Promise<{ value: T; bytes: number }> {
  const rchar = (): number => Number(/^rchar: (\d+)$/m.exec(fs.readFileSync('/proc/self/io', 'utf8'))![1]);
  const before = rchar();
  return fn().then((value) => ({ value, bytes: rchar() - before }));
}

/** `line N` padded with dots to 40 characters: 300 of them fill the 8000 bytes sniffed for binary content. */
const text = (n: number): string => `line ${n} `.padEnd(40, '.');

/** 300 text lines, then a line that starts as text and goes on as 1.5 GB of NUL bytes (a hole), then one more line. */
function gigantic(ws: Workspace, rel: string): string {
  const p = ws.write(rel, `${Array.from({ length: 300 }, (_, i) => text(i + 1)).join('\n')}\nstart of a gigantic line `);
  fs.truncateSync(p, 1.5 * GB);
  fs.appendFileSync(p, '\nthe line after\n');
  return p;
}

describe('big files (issue 10.6)', () => {
  if (process.platform !== 'linux') throw new Error('these tests measure reads through /proc/self/io (Linux)');
  let ws: Workspace;
  beforeEach(() => {
    ws = makeWorkspace();
  });
  afterEach(() => ws.cleanup());

  it('read_file of 3 lines of a 1.5 GB file reads only the start of it', async () => {
    gigantic(ws, 'huge.log');
    const { value: r, bytes } = await bytesReadBy(() => call(createReadFileTool(), { path: 'huge.log', startLine: 2, endLine: 4 }, ws.ctx()));
    assert.equal(r.isError, false, r.content);
    assert.equal(
      r.content,
      `2\t${text(2)}\n3\t${text(3)}\n4\t${text(4)}\n\n[Lines 2–4 of a 1.5 GB file (its lines were not counted). Call read_file with startLine: 5 to read on.]`,
    );
    assert.ok(bytes < 4 * 1024 * 1024, `read ${bytes} bytes of a 1.5 GB file to return 3 lines`);
  });

  it('read_file of a gigantic line returns its start, cut, and stops at its read budget; past it, a clear error', async () => {
    gigantic(ws, 'huge.log');
    const tool = createReadFileTool();
    const { value: r, bytes } = await bytesReadBy(() => call(tool, { path: 'huge.log', startLine: 300, endLine: 301 }, ws.ctx()));
    assert.equal(r.isError, false, r.content);
    const [line300, line301, ...notes] = r.content.split('\n');
    assert.equal(line300, `300\t${text(300)}`);
    assert.ok(line301.startsWith('301\tstart of a gigantic line \0'), JSON.stringify(line301.slice(0, 40)));
    assert.ok(line301.endsWith('… [line cut: more than 256 MB]'), JSON.stringify(line301.slice(-60)));
    assert.equal(line301.length, '301\t'.length + 2000 + '… [line cut: more than 256 MB]'.length);
    assert.deepEqual(notes, [
      '',
      "[Stopped after reading 256 MB of 'huge.log' (1.5 GB): showing lines 300–301. Use run_command (e.g. sed -n, tail) for far parts of huge files.]",
      '[1 long line(s) cut at 2000 characters.]',
    ]);
    assert.ok(bytes <= 257 * 1024 * 1024, `read ${bytes} bytes`);

    const past = await call(tool, { path: 'huge.log', startLine: 302 }, ws.ctx());
    assert.equal(past.code, 'TOO_LARGE', past.content);
    assert.match(past.content, /^read_file: stopped after reading 256 MB of 'huge\.log' \(1\.5 GB\) before reaching line 302; .*Use run_command/);
  });

  it('read_file counts the lines of a small file to the end, and reports a long line by its characters', async () => {
    ws.write('small.txt', `${'é'.repeat(3000)}\nb\nc\n`);
    const r = await call(createReadFileTool({ maxLineLength: 10 }), { path: 'small.txt', endLine: 2 }, ws.ctx());
    assert.equal(r.content, `1\t${'é'.repeat(10)}… [line cut: 3000 characters]\n2\tb\n\n[Lines 1–2 of 3.]\n[1 long line(s) cut at 10 characters.]`);
  });

  it('search_files streams a named 1.5 GB file up to its budget, with line numbers, says what it left, and skips it in a folder search', async () => {
    gigantic(ws, 'huge.log');
    const { value: r, bytes } = await bytesReadBy(() => call(createSearchFilesTool(), { pattern: 'line (7|299) |gigantic', path: 'huge.log' }, ws.ctx()));
    assert.equal(r.isError, false, r.content);
    const lines = r.content.split('\n');
    assert.ok(lines[2].startsWith('huge.log:301: start of a gigantic line \0'), JSON.stringify(lines[2].slice(0, 50)));
    assert.deepEqual(
      [...lines.slice(0, 2), ...lines.slice(3)],
      [
        `huge.log:7: ${text(7)}`,
        `huge.log:299: ${text(299)}`,
        '',
        '[Searched the first 64 MB of huge.log (1.5 GB); search the rest with run_command (e.g. grep -n).]',
        '[1 line(s) longer than 16384 characters were searched only in their first 16384.]',
      ],
    );
    assert.ok(bytes <= 65 * 1024 * 1024, `read ${bytes} bytes`);

    // In a folder search the big file is skipped (a log or a bundle is noise there) without reading it.
    ws.write('small.log', 'a gigantic mistake\n');
    const { value: all, bytes: walked } = await bytesReadBy(() => call(createSearchFilesTool(), { pattern: 'gigantic' }, ws.ctx()));
    assert.equal(all.content, 'small.log:1: a gigantic mistake\n\n[Skipped 1 file(s) larger than 2048 KB.]');
    assert.ok(walked < 1024 * 1024, `read ${walked} bytes`);
  });

  it('edit_file refuses a 1.5 GB file without reading it, and leaves it as it was', async () => {
    const p = gigantic(ws, 'huge.log');
    const before = fs.statSync(p);
    const { value: r, bytes } = await bytesReadBy(() => call(createEditFileTool(), { path: 'huge.log', oldText: 'line 7 ', newText: 'LINE 7 ' }, ws.ctx()));
    assert.equal(r.code, 'TOO_LARGE', r.content);
    assert.equal(
      r.content,
      "edit_file: 'huge.log' is 1.5 GB, more than the 64 MB edit_file changes; nothing was changed. Use run_command (e.g. sed -i) for huge files.",
    );
    assert.ok(bytes < 1024 * 1024, `read ${bytes} bytes`);
    const after = fs.statSync(p);
    assert.deepEqual([after.ino, after.size, after.mtimeMs], [before.ino, before.size, before.mtimeMs]);
  });
});
