import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createSearchFilesTool } from '../../../src/core/tools/search-files';
import { call, makeWorkspace, type Workspace } from './fixture';

describe('search_files', () => {
  let ws: Workspace;
  beforeEach(() => {
    ws = makeWorkspace();
    ws.write('src/a.ts', 'export function main() {}\nconst x = 1;\n');
    ws.write('src/b.js', '// main entry\nfunction helper() {}\n');
    ws.write('README.md', 'Run MAIN first.\r\n');
    ws.write('node_modules/dep/index.js', 'function main() {}');
    ws.write('.git/config', 'main');
    fs.writeFileSync(ws.at('src/blob.bin'), Buffer.from('main\0\0\0'));
  });
  afterEach(() => ws.cleanup());
  const tool = createSearchFilesTool();

  it('returns path:line: text for each matching line, sorted, skipping .git, node_modules and binaries', async () => {
    const r = await call(tool, { pattern: 'main' }, ws.ctx());
    assert.equal(r.isError, false);
    assert.equal(r.content, 'src/a.ts:1: export function main() {}\nsrc/b.js:1: // main entry\n\n[Skipped 1 binary file(s).]');
  });

  it('supports regexes, ignoreCase, a path and an include glob', async () => {
    assert.equal((await call(tool, { pattern: 'function\\s+\\w+\\(\\)', path: 'src', include: '*.js' }, ws.ctx())).content, 'src/b.js:2: function helper() {}');
    assert.equal((await call(tool, { pattern: 'main', ignoreCase: true, include: '*.md' }, ws.ctx())).content, 'README.md:1: Run MAIN first.');
    assert.equal((await call(tool, { pattern: 'const', include: 'src/**/*.{ts,tsx}' }, ws.ctx())).content, 'src/a.ts:2: const x = 1;');
    assert.equal((await call(tool, { pattern: 'x', path: 'src/a.ts' }, ws.ctx())).content, 'src/a.ts:1: export function main() {}\nsrc/a.ts:2: const x = 1;');
  });

  it('says so when nothing matches (not an error)', async () => {
    const r = await call(tool, { pattern: 'zebra' }, ws.ctx());
    assert.equal(r.isError, false);
    assert.match(r.content, /^No matches for \/zebra\/ in \.; 4 file\(s\) searched\./);
  });

  it('names an invalid regex in an error result', async () => {
    const r = await call(tool, { pattern: 'main(' }, ws.ctx());
    assert.equal(r.isError, true);
    assert.equal(r.code, 'INVALID_REGEX');
    assert.match(r.content, /^search_files: invalid regular expression "main\(": .*Escape special characters/);
  });

  it('caps matches and long lines', async () => {
    ws.write('many.txt', Array.from({ length: 30 }, () => 'hit').join('\n'));
    ws.write('long.txt', `${'a'.repeat(1000)}NEEDLE${'b'.repeat(1000)}`);
    const capped = await call(createSearchFilesTool({ maxMatches: 5 }), { pattern: 'hit' }, ws.ctx());
    assert.equal(capped.content.split('\n\n')[0].split('\n').length, 5);
    assert.match(capped.content, /\[Stopped at 5 matches/);
    const long = await call(createSearchFilesTool({ maxLineLength: 60 }), { pattern: 'NEEDLE' }, ws.ctx());
    const line = long.content.split('\n')[0];
    assert.match(line, /^long\.txt:1: …a+NEEDLEb+…$/);
    assert.ok(line.length < 100);
  });

  it('does not follow symlinks out of the workspace, and refuses an outside path', async () => {
    fs.writeFileSync(path.join(ws.outside, 'secret.txt'), 'main secret');
    fs.symlinkSync(ws.outside, ws.at('src/out'));
    fs.symlinkSync(path.join(ws.outside, 'secret.txt'), ws.at('src/secret.txt'));
    const r = await call(tool, { pattern: 'secret' }, ws.ctx());
    assert.match(r.content, /^No matches/);
    assert.equal((await call(tool, { pattern: 'x', path: '../outside' }, ws.ctx())).code, 'OUTSIDE_WORKSPACE');
  });
});
