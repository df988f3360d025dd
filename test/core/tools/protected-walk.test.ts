// The protected walk (decisions 0042, 0111): what appeared below a root's top since the last walk
// that asked travels with that walk's result, so two workspaces walked in one process never take
// each other's findings, and a walk that does not ask (the file tools') uses up nothing. Real files.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { protectNames, standInNames } from '../../../src/core/tools/protected-names';
import { protectedTree } from '../../../src/core/tools/protected-walk';
import { makeWorkspace, type Workspace } from './fixture';

describe('protected walk: what appeared travels with the walk of its own root', () => {
  let a: Workspace;
  let b: Workspace;
  beforeEach(() => {
    a = makeWorkspace();
    b = makeWorkspace();
  });
  afterEach(() => {
    a.cleanup();
    b.cleanup();
  });

  const appeared = async (ws: Workspace, ask = true) => {
    const tree = await protectedTree(ws.root, undefined, { appeared: ask });
    return tree.appeared?.map((e) => path.relative(ws.root, e.path)).sort();
  };

  it('two workspaces walked in one process: each walk says only its own root’s, once', async () => {
    a.write('mine/.arbor/settings.json', '{}');
    assert.deepEqual(await appeared(a), [], 'the first walk has nothing to compare with');
    assert.deepEqual(await appeared(b), []);
    fs.mkdirSync(a.at('sub/.arbor'), { recursive: true });
    fs.mkdirSync(a.at('.claude'));
    fs.mkdirSync(b.at('deep/x/.claude'), { recursive: true });
    fs.mkdirSync(b.at('other/.git'), { recursive: true });
    assert.deepEqual(await appeared(b), ['deep/x/.claude', 'other/.git'], "b's walk: b's folders, none of a's");
    assert.deepEqual(await appeared(a), ['sub/.arbor'], "a's walk: a's folder (the top's own names are never said)");
    assert.deepEqual(await appeared(a), [], 'said once');
    assert.deepEqual(await appeared(b), []);
  });

  it("a walk that does not ask (the file tools') leaves what appeared to the next walk that asks", async () => {
    await appeared(a);
    fs.mkdirSync(a.at('pkg/.vscode'), { recursive: true });
    const quiet = await protectedTree(a.root);
    assert.equal(quiet.appeared, undefined, 'not asked, not said');
    assert.ok(
      quiet.entries.some((e) => e.path === a.at('pkg/.vscode')),
      'protected all the same',
    );
    assert.equal(await appeared(a, false), undefined);
    assert.deepEqual(await appeared(a), ['pkg/.vscode']);
  });

  it('a protected name added or taken back between two walks does not make the walk forget what appeared', async () => {
    await appeared(a);
    fs.mkdirSync(a.at('sub/.arbor'), { recursive: true });
    const drop = protectNames({}, ['.kiro'], () => 'kiro');
    try {
      assert.deepEqual(await appeared(a), ['sub/.arbor'], 'found after the names changed');
    } finally {
      drop();
    }
    fs.mkdirSync(a.at('pkg/.claude'), { recursive: true });
    assert.deepEqual(await appeared(a), ['pkg/.claude'], 'and after a name was taken back');
  });

  it('a configured name keeps its spelling for its stand-in (a case-sensitive file system)', () => {
    const drop = protectNames({}, ['AGENTS.md', '.Kiro'], () => 'x');
    try {
      const names = standInNames();
      assert.ok(names.includes('AGENTS.md') && names.includes('.Kiro'), names.join(', '));
      assert.ok(!names.includes('agents.md'));
    } finally {
      drop();
    }
  });
});
