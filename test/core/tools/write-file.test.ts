import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createWriteFileTool } from '../../../src/core/tools/write-file';
import { call, makeWorkspace, snapshot, type Workspace } from './fixture';

describe('write_file', () => {
  let ws: Workspace;
  beforeEach(() => {
    ws = makeWorkspace();
  });
  afterEach(() => ws.cleanup());
  const tool = createWriteFileTool();

  it('creates a file and its missing parent directories inside the workspace', async () => {
    const r = await call(tool, { path: 'src/deep/new.ts', content: 'a\nb\n' }, ws.ctx());
    assert.deepEqual(r, { isError: false, content: 'Created src/deep/new.ts (4 bytes, 2 lines).' });
    assert.equal(ws.read('src/deep/new.ts'), 'a\nb\n');
  });

  it('overwrites an existing file, keeping its mode', async () => {
    const p = ws.write('run.sh', 'old');
    fs.chmodSync(p, 0o755);
    const r = await call(tool, { path: 'run.sh', content: 'new' }, ws.ctx());
    assert.equal(r.content, 'Overwrote run.sh (3 bytes, 1 lines).');
    assert.equal(ws.read('run.sh'), 'new');
    assert.equal(fs.statSync(p).mode & 0o777, 0o755);
  });

  it('writes through a symlink whose target is inside the workspace', async () => {
    ws.write('real.txt', 'old');
    fs.symlinkSync('real.txt', ws.at('alias.txt'));
    await call(tool, { path: 'alias.txt', content: 'via alias' }, ws.ctx());
    assert.equal(ws.read('real.txt'), 'via alias');
    assert.ok(fs.lstatSync(ws.at('alias.txt')).isSymbolicLink(), 'the link itself is left in place');
  });

  it('is refused entirely in read-only: nothing is created or changed', async () => {
    ws.write('keep.txt', 'old');
    const before = snapshot(ws.base);
    for (const p of ['keep.txt', 'new.txt', 'dir/new.txt']) {
      const r = await call(tool, { path: p, content: 'x' }, ws.ctx({ sandbox: 'read-only' }));
      assert.equal(r.isError, true);
      assert.equal(r.code, 'READ_ONLY');
      assert.match(r.content, /^write_file: the sandbox is read-only/);
    }
    assert.deepEqual(snapshot(ws.base), before);
  });

  it('writes outside the workspace only in full-access', async () => {
    const target = path.join(ws.outside, 'o.txt');
    assert.equal((await call(tool, { path: target, content: 'x' }, ws.ctx())).code, 'OUTSIDE_WORKSPACE');
    assert.ok(!fs.existsSync(target));
    const r = await call(tool, { path: target, content: 'x' }, ws.ctx({ sandbox: 'full-access' }));
    assert.equal(r.isError, false, r.content);
    assert.equal(fs.readFileSync(target, 'utf8'), 'x');
  });

  it('refuses a directory or a FIFO as the target', async () => {
    fs.mkdirSync(ws.at('d'));
    assert.equal((await call(tool, { path: 'd', content: 'x' }, ws.ctx())).code, 'NOT_A_FILE');
    if (process.platform !== 'win32') {
      require('node:child_process').execFileSync('mkfifo', [ws.at('pipe')]);
      const r = await call(tool, { path: 'pipe', content: 'x' }, ws.ctx());
      assert.equal(r.code, 'NOT_A_FILE', r.content);
    }
  });
});
