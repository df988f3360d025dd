import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { physicalPath, protectedReason, type ResolvedPath, resolveForRead, resolveForWrite } from '../../../src/core/tools/paths';
import { makeWorkspace, type Workspace } from './fixture';

describe('workspace paths: resolution on the real file system', () => {
  let ws: Workspace;
  beforeEach(() => {
    ws = makeWorkspace();
  });
  afterEach(() => ws.cleanup());

  const okRead = async (p: string, sandbox: 'read-only' | 'workspace-write' | 'full-access' = 'workspace-write'): Promise<ResolvedPath> => {
    const r = await resolveForRead(ws.ctx({ sandbox }), p);
    assert.ok(r.ok, `expected ${p} to resolve: ${JSON.stringify(r)}`);
    return r;
  };

  it('resolves relative paths against the first root, absolute ones as given', async () => {
    ws.write('src/a.ts', 'x');
    const rel = await okRead('src/a.ts');
    assert.equal(rel.realPath, ws.at('src/a.ts'));
    assert.equal(rel.root, ws.root);
    assert.equal(rel.relative, 'src/a.ts');
    assert.equal(rel.kind, 'file');
    const abs = await okRead(ws.at('src/a.ts'));
    assert.equal(abs.realPath, ws.at('src/a.ts'));
    assert.equal((await okRead('.')).relative, '.');
    assert.equal((await okRead('./src//a.ts')).relative, 'src/a.ts');
  });

  it('resolves against the real root when the root is given through a symlink', async () => {
    const alias = path.join(ws.base, 'alias');
    fs.symlinkSync(ws.root, alias);
    ws.write('f.txt', 'x');
    const r = await resolveForRead(ws.ctx({ roots: [alias] }), 'f.txt');
    assert.ok(r.ok);
    assert.equal(r.realPath, ws.at('f.txt'));
    assert.equal(r.relative, 'f.txt');
  });

  it('picks the root that holds the target among several', async () => {
    const second = path.join(ws.base, 'second');
    fs.mkdirSync(second);
    const r = await resolveForWrite(ws.ctx({ roots: [ws.root, second] }), path.join(second, 'n.txt'));
    assert.ok(r.ok);
    assert.equal(r.root, second);
    assert.equal(r.relative, 'n.txt');
  });

  it('follows symlinks, dangling ones included, to where the kernel would go', async () => {
    fs.symlinkSync(path.join(ws.outside, 'nothing-yet.txt'), ws.at('dangling'));
    assert.deepEqual(await physicalPath(ws.at('dangling')), { ok: true, path: path.join(ws.outside, 'nothing-yet.txt') });
    fs.mkdirSync(ws.at('sub'));
    fs.symlinkSync('../outside', ws.at('sub/up')); // relative to the link's directory: ws/outside
    assert.deepEqual(await physicalPath(`${ws.root}/sub/up/x`), { ok: true, path: path.join(ws.root, 'outside', 'x') });
    // `..` after a symlink climbs the target's parent, not the link's.
    fs.symlinkSync(ws.outside, ws.at('out'));
    assert.deepEqual(await physicalPath(`${ws.root}/out/../y`), { ok: true, path: path.join(ws.base, 'y') });
  });

  it('gives up on symlink loops with a message', async () => {
    fs.symlinkSync('loop-b', ws.at('loop-a'));
    fs.symlinkSync('loop-a', ws.at('loop-b'));
    const r = await resolveForRead(ws.ctx(), 'loop-a/x');
    assert.equal(r.ok, false);
    assert.match((r as { message: string }).message, /too many symbolic links/);
  });

  it('refuses reads outside every root unless the sandbox is full-access', async () => {
    fs.writeFileSync(path.join(ws.outside, 'secret.txt'), 's');
    for (const sandbox of ['read-only', 'workspace-write'] as const) {
      const r = await resolveForRead(ws.ctx({ sandbox }), '../outside/secret.txt');
      assert.equal(r.ok, false);
      assert.equal((r as { code: string }).code, 'OUTSIDE_WORKSPACE');
      assert.match((r as { message: string }).message, /outside the workspace/);
    }
    const full = await okRead('../outside/secret.txt', 'full-access');
    assert.equal(full.root, undefined);
    assert.equal(full.relative, path.join(ws.outside, 'secret.txt'));
  });

  it('refuses every write in read-only, before looking at the path', async () => {
    const r = await resolveForWrite(ws.ctx({ sandbox: 'read-only' }), 'a.txt');
    assert.equal(r.ok, false);
    assert.equal((r as { code: string }).code, 'READ_ONLY');
  });

  it('allows writes anywhere in full-access, still marking protected paths', async () => {
    const r = await resolveForWrite(ws.ctx({ sandbox: 'full-access' }), path.join(ws.outside, 'n.txt'));
    assert.ok(r.ok);
    assert.equal(r.root, undefined);
    const p = await resolveForWrite(ws.ctx({ sandbox: 'full-access' }), '.vscode/settings.json');
    assert.ok(p.ok && p.protectedReason);
  });

  it('refuses bad path strings: empty, NUL, "~", a directory, a trailing slash for writes', async () => {
    ws.write('dir/f', 'x');
    const cases: [string, RegExp][] = [
      ['', /empty/],
      ['a\0b', /NUL/],
      ['~/notes.txt', /'~' is not expanded/],
      ['dir', /is a directory/],
      ['dir/', /ends with a slash/],
    ];
    for (const [p, re] of cases) {
      const r = await resolveForWrite(ws.ctx(), p);
      assert.equal(r.ok, false, p);
      assert.match((r as { message: string }).message, re, p);
    }
  });

  it('marks protected paths case-insensitively, at any depth, and through aliases', async () => {
    const yes = [
      '.git/config',
      '.GIT/hooks/pre-commit',
      '.vscode/settings.json',
      '.VSCode/Settings.json',
      '.arbor/policy.json',
      'team.code-workspace',
      'Team.Code-Workspace',
      'sub/.git/config',
      '.git./config',
      '.git',
    ];
    for (const p of yes) assert.ok(protectedReason(p), p);
    const no = ['src/git.ts', '.github/workflows/ci.yml', 'vscode/settings.json', 'a.code-workspace.bak', '.gitignore', 'arbor/x'];
    for (const p of no) assert.equal(protectedReason(p), undefined, p);

    fs.mkdirSync(ws.at('config/editor'), { recursive: true });
    fs.symlinkSync('config/editor', ws.at('.vscode'));
    const viaAlias = await resolveForWrite(ws.ctx(), 'config/editor/settings.json');
    assert.ok(viaAlias.ok && viaAlias.protectedReason, 'the real directory behind .vscode is protected too');
    const plain = await resolveForWrite(ws.ctx(), 'config/other.json');
    assert.ok(plain.ok && !plain.protectedReason);
  });
});
