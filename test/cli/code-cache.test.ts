import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { codeCacheDir, requireWithCodeCache } from '../../src/cli/code-cache';

// Decision 0085: the commands bundle is compiled with a V8 code cache kept in the user's cache
// folder. A cache is used only for the exact bytes it was made from, a damaged one is ignored,
// and the module behaves as `require` would (exports, require beside it, dynamic import).

describe('CLI code cache', () => {
  let dir: string;
  let cacheDir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-code-cache-'));
    cacheDir = path.join(dir, 'cache');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, text: string): string => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, text);
    return file;
  };
  const cacheFiles = () => (fs.existsSync(cacheDir) ? fs.readdirSync(cacheDir) : []);

  it('loads a CommonJS file as require does, then compiles it from the cache it saved', async () => {
    write('dep.js', 'module.exports = 41;');
    const file = write(
      'mod.js',
      `"use strict"; exports.answer = () => require('./dep.js') + 1; exports.where = __dirname; exports.os = () => import('node:os');`,
    );
    const first = requireWithCodeCache(file, cacheDir);
    const ex = first.exports as { answer(): number; where: string; os(): Promise<typeof os> };
    assert.equal(first.cache, 'miss');
    assert.equal(ex.answer(), 42);
    assert.equal(ex.where, dir);
    assert.equal(typeof (await ex.os()).platform, 'function', 'import() goes through Node loader');
    first.save();
    assert.equal(cacheFiles().length, 1);
    const second = requireWithCodeCache(file, cacheDir);
    assert.equal(second.cache, 'used');
    assert.equal((second.exports as { answer(): number }).answer(), 42);
  });

  it('never uses a cache for other bytes, even of the same length', () => {
    const file = write('mod.js', 'exports.v = 1;');
    const a = requireWithCodeCache(file, cacheDir);
    a.save();
    fs.writeFileSync(file, 'exports.v = 2;');
    const b = requireWithCodeCache(file, cacheDir);
    assert.equal(b.cache, 'miss');
    assert.equal((b.exports as { v: number }).v, 2);
  });

  it('ignores a damaged cache file and writes a good one', () => {
    const file = write('mod.js', 'exports.f = (x) => x * 2;');
    requireWithCodeCache(file, cacheDir).save();
    const [name] = cacheFiles();
    const bytes = fs.readFileSync(path.join(cacheDir, name));
    bytes[bytes.length - 10] ^= 0xff;
    fs.writeFileSync(path.join(cacheDir, name), bytes);
    const again = requireWithCodeCache(file, cacheDir);
    assert.equal(again.cache, 'miss');
    assert.equal((again.exports as { f(x: number): number }).f(21), 42);
    again.save();
    assert.equal(requireWithCodeCache(file, cacheDir).cache, 'used');
  });

  it('runs without a cache where none can be written', () => {
    const file = write('mod.js', 'exports.ok = true;');
    const blocked = write('not-a-folder', '');
    const m = requireWithCodeCache(file, path.join(blocked, 'cache'));
    m.save();
    assert.equal((m.exports as { ok: boolean }).ok, true);
    assert.equal(requireWithCodeCache(file, undefined).cache, 'off');
  });

  it('lives in the user cache folder, or where ARBOR_CACHE_DIR says, or nowhere with ARBOR_CODE_CACHE=0', () => {
    assert.equal(codeCacheDir({ ARBOR_CODE_CACHE: '0' }), undefined);
    assert.equal(codeCacheDir({ ARBOR_CACHE_DIR: '/c' }), path.join('/c', 'code-cache'));
    if (process.platform === 'linux') assert.equal(codeCacheDir({ XDG_CACHE_HOME: '/x' }), path.join('/x', 'arbor', 'code-cache'));
  });
});
