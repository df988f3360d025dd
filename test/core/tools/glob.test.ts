import * as assert from 'node:assert/strict';
import { globMatches, globToRegExp } from '../../../src/core/tools/glob';

describe('include globs for search_files', () => {
  const m = (glob: string, rel: string): boolean => globMatches(globToRegExp(glob), glob, [rel]);

  it('matches base names when the glob has no slash', () => {
    assert.ok(m('*.ts', 'src/core/a.ts'));
    assert.ok(!m('*.ts', 'src/core/a.tsx'));
    assert.ok(m('*.{js,mjs}', 'lib/x.mjs'));
    assert.ok(m('file?.txt', 'file1.txt'));
    assert.ok(m('[ab].md', 'docs/b.md'));
    assert.ok(!m('[!ab].md', 'docs/b.md'));
  });

  it('matches whole relative paths when it has one; ** spans directories, * does not', () => {
    assert.ok(m('src/**/*.test.ts', 'src/a.test.ts'));
    assert.ok(m('src/**/*.test.ts', 'src/x/y/a.test.ts'));
    assert.ok(!m('src/*.ts', 'src/x/a.ts'));
    assert.ok(m('**/fixtures/*', 'test/fixtures/f.json'));
    assert.ok(!m('src/a.ts', 'src/aXts'), 'dots are literal');
  });

  it('throws a readable error for malformed globs', () => {
    assert.throws(() => globToRegExp('*.{ts'), /unclosed '\{'/);
    assert.throws(() => globToRegExp('[ab'), /unclosed '\['/);
  });
});
