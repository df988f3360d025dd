import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { createEditFileTool } from '../../../src/core/tools/edit-file';
import { call, makeWorkspace, snapshot, type Workspace } from './fixture';

describe('edit_file', () => {
  let ws: Workspace;
  beforeEach(() => {
    ws = makeWorkspace();
    ws.write('a.ts', 'const a = 1;\nconst b = 2;\nconst a2 = 1;\n');
  });
  afterEach(() => ws.cleanup());
  const tool = createEditFileTool();

  it('replaces exact text that occurs once', async () => {
    const r = await call(tool, { path: 'a.ts', oldText: 'const b = 2;', newText: 'const b = 3;' }, ws.ctx());
    assert.deepEqual(r, { isError: false, content: 'Edited a.ts: replaced 1 occurrence (line 2).' });
    assert.equal(ws.read('a.ts'), 'const a = 1;\nconst b = 3;\nconst a2 = 1;\n');
  });

  it('keeps $ patterns in newText literal', async () => {
    await call(tool, { path: 'a.ts', oldText: 'const b = 2;', newText: "const b = '$&$1$$';" }, ws.ctx());
    assert.match(ws.read('a.ts'), /const b = '\$&\$1\$\$';/);
  });

  it('refuses ambiguous text without replaceAll, naming the count and the lines', async () => {
    const r = await call(tool, { path: 'a.ts', oldText: '= 1;', newText: '= 9;' }, ws.ctx());
    assert.equal(r.code, 'AMBIGUOUS_MATCH');
    assert.match(r.content, /^edit_file: oldText was found 2 times in 'a\.ts' \(lines 1, 3\); nothing was changed\..*replaceAll: true/);
    assert.equal(ws.read('a.ts'), 'const a = 1;\nconst b = 2;\nconst a2 = 1;\n');
  });

  it('replaces every occurrence with replaceAll', async () => {
    const r = await call(tool, { path: 'a.ts', oldText: '= 1;', newText: '= 9;', replaceAll: true }, ws.ctx());
    assert.equal(r.content, 'Edited a.ts: replaced 2 occurrences (lines 1, 3).');
    assert.equal(ws.read('a.ts'), 'const a = 9;\nconst b = 2;\nconst a2 = 9;\n');
  });

  it('says clearly when the text is absent, with a whitespace hint when that is why', async () => {
    const absent = await call(tool, { path: 'a.ts', oldText: 'const c', newText: 'x' }, ws.ctx());
    assert.equal(absent.code, 'NO_MATCH');
    assert.match(absent.content, /^edit_file: oldText was not found in 'a\.ts'; nothing was changed\. Read the file again/);
    const spaced = await call(tool, { path: 'a.ts', oldText: '  const b = 2;  ', newText: 'x' }, ws.ctx());
    assert.match(spaced.content, /leading and trailing whitespace/);
  });

  it('matches LF text in a CRLF file and keeps CRLF', async () => {
    ws.write('w.txt', 'one\r\ntwo\r\nthree\r\n');
    const r = await call(tool, { path: 'w.txt', oldText: 'one\ntwo', newText: 'uno\ndos' }, ws.ctx());
    assert.equal(r.isError, false, r.content);
    assert.equal(ws.read('w.txt'), 'uno\r\ndos\r\nthree\r\n');
  });

  it('refuses empty or identical texts and missing files', async () => {
    assert.match((await call(tool, { path: 'a.ts', oldText: '', newText: 'x' }, ws.ctx())).content, /'oldText' is empty/);
    assert.match((await call(tool, { path: 'a.ts', oldText: 'a', newText: 'a' }, ws.ctx())).content, /identical/);
    const missing = await call(tool, { path: 'nope.ts', oldText: 'a', newText: 'b' }, ws.ctx());
    assert.equal(missing.code, 'NOT_FOUND');
    assert.match(missing.content, /use write_file to create it/);
  });

  it('is refused in read-only and leaves the file alone', async () => {
    const before = snapshot(ws.base);
    const r = await call(tool, { path: 'a.ts', oldText: 'const b = 2;', newText: 'x' }, ws.ctx({ sandbox: 'read-only' }));
    assert.equal(r.code, 'READ_ONLY');
    assert.match(r.content, /^edit_file: the sandbox is read-only/);
    assert.deepEqual(snapshot(ws.base), before);
  });
});

// Two agents (a parent and its child, say) editing one file at once: each read-modify-write
// holds the file's lock, so neither edit is computed from text the other replaced.
describe('edit_file: concurrent edits of one file from separate callers (issue 10.2)', () => {
  let ws: Workspace;
  beforeEach(() => {
    ws = makeWorkspace();
  });
  afterEach(() => ws.cleanup());

  it('keeps all twenty edits made at once, through different names of the file', async () => {
    const n = 20;
    ws.write('f.txt', Array.from({ length: n }, (_, i) => `k${i}=old`).join('\n'));
    fs.symlinkSync('f.txt', ws.at('alias.txt'));
    const tool = createEditFileTool();
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        call(tool, { path: i % 2 ? 'alias.txt' : 'f.txt', oldText: `k${i}=old`, newText: `k${i}=new` }, ws.ctx({ sessionId: `S${i % 3}` })),
      ),
    );
    for (const r of results) assert.equal(r.isError, false, r.content);
    assert.equal(ws.read('f.txt'), Array.from({ length: n }, (_, i) => `k${i}=new`).join('\n'));
  });
});
