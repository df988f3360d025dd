import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { createListFilesTool } from '../../../src/core/tools/list-files';
import { call, makeWorkspace, type Workspace } from './fixture';

describe('list_files', () => {
  let ws: Workspace;
  beforeEach(() => {
    ws = makeWorkspace();
    ws.write('b.txt', '');
    ws.write('a.txt', '');
    ws.write('src/core/x.ts', '');
    ws.write('src/index.ts', '');
    ws.write('src-extra/y.ts', '');
    ws.write('node_modules/pkg/index.js', '');
    ws.write('.git/HEAD', '');
    ws.write('.vscode/settings.json', '');
  });
  afterEach(() => ws.cleanup());
  const tool = createListFilesTool();

  it('lists the root by default, sorted, directories with a slash, skipping .git and node_modules', async () => {
    const r = await call(tool, {}, ws.ctx());
    assert.equal(r.isError, false);
    assert.equal(r.content, '.vscode/\na.txt\nb.txt\nsrc/\nsrc-extra/\n\n[Not listed: .git, node_modules.]');
  });

  it('lists recursively in tree order, paths relative to the root', async () => {
    const r = await call(tool, { path: 'src', recursive: true }, ws.ctx());
    assert.equal(r.content, 'src/core/\nsrc/core/x.ts\nsrc/index.ts');
    const all = await call(tool, { recursive: true }, ws.ctx());
    assert.deepEqual(all.content.split('\n\n')[0].split('\n'), [
      '.vscode/',
      '.vscode/settings.json',
      'a.txt',
      'b.txt',
      'src/',
      'src/core/',
      'src/core/x.ts',
      'src/index.ts',
      'src-extra/',
      'src-extra/y.ts',
    ]);
  });

  it('stops at the depth cap and says so', async () => {
    const r = await call(tool, { recursive: true, depth: 1 }, ws.ctx());
    assert.match(r.content, /^\.vscode\/\na\.txt\nb\.txt\nsrc\/\nsrc-extra\/\n/);
    assert.match(r.content, /\[Depth limit 1 reached/);
  });

  it('caps the number of entries', async () => {
    const r = await call(createListFilesTool({ maxEntries: 3 }), { recursive: true }, ws.ctx());
    assert.equal(r.content.split('\n\n')[0].split('\n').length, 3);
    assert.match(r.content, /\[Listing cut at 3 entries/);
  });

  it('shows symlinks without following them', async () => {
    fs.symlinkSync(ws.outside, ws.at('src/out'));
    const r = await call(tool, { path: 'src', recursive: true }, ws.ctx());
    assert.match(r.content, new RegExp(`^src/out -> ${ws.outside.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
  });

  it('lists an explicitly named node_modules, but not outside the workspace', async () => {
    assert.equal((await call(tool, { path: 'node_modules' }, ws.ctx())).content, 'node_modules/pkg/');
    const out = await call(tool, { path: '..' }, ws.ctx());
    assert.equal(out.code, 'OUTSIDE_WORKSPACE');
  });

  it('answers a file, a missing path and an empty directory clearly', async () => {
    assert.equal((await call(tool, { path: 'a.txt' }, ws.ctx())).code, 'NOT_A_DIRECTORY');
    assert.equal((await call(tool, { path: 'nope' }, ws.ctx())).code, 'NOT_FOUND');
    fs.mkdirSync(ws.at('empty'));
    assert.equal((await call(tool, { path: 'empty' }, ws.ctx())).content, '(empty is empty)');
  });
});
