import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import Module, { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vm from 'node:vm';
import { crc32 } from 'node:zlib';

// The commands bundle is ~1.5 MB of JavaScript that V8 parses and compiles on every command:
// ~50 ms of a one-turn `arbor run` that a native peer does not pay. V8 can hand back what it
// compiled (a code cache) and accept it in the next process instead of compiling again
// (decision 0085). Node 20 has no `module.enableCompileCache()` (Node 22), so the launcher
// compiles the bundle itself through `vm.Script` with the cache, as Node's own loader would
// (the CommonJS wrapper, `require` relative to the file, `import()` through Node's loader).
//
// Safety: V8 checks only the source's length, its own version and its flags, so the cache file
// is named by a hash of the bundle's bytes and the Node version and architecture; a file with
// another name is never read. It is written whole (temp file, then rename) with a CRC of its
// bytes in front, checked before V8 sees it; V8 rejecting it (other flags) means compile as
// usual and write a new one. Any failure — no home, a read-only cache folder, a damaged file —
// is a normal compile; nothing is said. `ARBOR_CODE_CACHE=0` turns it off.

const MAGIC = 'arbor-v8-code-cache-1\n';
const PREFIX = 'cli-commands-';
const STALE_MS = 7 * 24 * 3600 * 1000;

export interface CachedModule {
  exports: unknown;
  /** 'used': compiled from the cache; 'miss': none (or V8 refused it); 'off': no cache folder. */
  cache: 'used' | 'miss' | 'off';
  /** Write the code cache if there was none (or V8 refused it); after the command ran, so it holds the functions the command compiled. */
  save(): void;
}

/** Where the cache lives: $ARBOR_CACHE_DIR, else the platform's per-user cache folder; undefined: none. */
export function codeCacheDir(env: NodeJS.ProcessEnv): string | undefined {
  if (env.ARBOR_CODE_CACHE === '0') return undefined;
  if (env.ARBOR_CACHE_DIR) return path.join(env.ARBOR_CACHE_DIR, 'code-cache');
  let home: string;
  try {
    home = os.homedir();
  } catch {
    return undefined;
  }
  if (!home) return undefined;
  const base =
    process.platform === 'darwin'
      ? path.join(home, 'Library', 'Caches')
      : process.platform === 'win32'
        ? (env.LOCALAPPDATA ?? path.join(home, 'AppData', 'Local'))
        : env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME)
          ? env.XDG_CACHE_HOME
          : path.join(home, '.cache');
  return path.join(base, 'arbor', 'code-cache');
}

/** Load a CommonJS file as `require` would, compiled with the code cache in `dir` when there is a usable one. */
export function requireWithCodeCache(file: string, dir: string | undefined): CachedModule {
  const bytes = fs.readFileSync(file);
  const source = bytes.toString('utf8');
  const key = `${PREFIX}${createHash('sha1').update(bytes).digest('hex').slice(0, 24)}-${process.version}-${process.arch}.bin`;
  const cacheFile = dir ? path.join(dir, key) : undefined;
  const cachedData = cacheFile ? readCache(cacheFile) : undefined;
  const script = new vm.Script(Module.wrap(source), {
    filename: file,
    cachedData,
    importModuleDynamically: vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  } as vm.ScriptOptions);
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  const mod = new Module(file);
  mod.filename = file;
  const req = createRequire(file);
  require.cache[file] = mod;
  try {
    wrapper.call(mod.exports, mod.exports, req, mod, file, path.dirname(file));
  } catch (err) {
    delete require.cache[file];
    throw err;
  }
  mod.loaded = true;
  const stale = cachedData === undefined || script.cachedDataRejected === true;
  return {
    exports: mod.exports,
    cache: dir === undefined ? 'off' : stale ? 'miss' : 'used',
    save: () => {
      if (stale && dir && cacheFile) writeCache(dir, cacheFile, script);
    },
  };
}

/** The cache's V8 bytes, or undefined when absent or damaged. */
function readCache(file: string): Buffer | undefined {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch {
    return undefined;
  }
  const head = MAGIC.length + 4;
  if (buf.length <= head || buf.toString('latin1', 0, MAGIC.length) !== MAGIC) return undefined;
  const data = buf.subarray(head);
  return buf.readUInt32BE(MAGIC.length) === crc32(data) ? data : undefined;
}

function writeCache(dir: string, file: string, script: vm.Script): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    const data = script.createCachedData();
    const head = Buffer.alloc(MAGIC.length + 4);
    head.write(MAGIC, 'latin1');
    head.writeUInt32BE(crc32(data), MAGIC.length);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(tmp, Buffer.concat([head, data]), { mode: 0o600 });
    fs.renameSync(tmp, file);
    // Caches of other bundles (an older Arbor, another Node) unused for a week are dead weight;
    // two installs used in turn keep theirs.
    const old = Date.now() - STALE_MS;
    for (const name of fs.readdirSync(dir)) {
      const other = path.join(dir, name);
      if (!name.startsWith(PREFIX) || other === file) continue;
      const st = fs.statSync(other);
      if (Math.max(st.atimeMs, st.mtimeMs) < old) fs.rmSync(other, { force: true });
    }
  } catch {
    try {
      fs.rmSync(tmp, { force: true });
    } catch {
      // No folder to leave a temp file in.
    }
  }
}
