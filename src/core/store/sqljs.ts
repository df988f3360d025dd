import * as path from 'node:path';
import type { SqlJsStatic } from 'sql.js';
import initSqlJs from 'sql.js';

let loading: Promise<SqlJsStatic> | undefined;
let wasmDir: string | undefined;

/**
 * Where sql-wasm.wasm lives. A bundled host sets this to its own copy before the first
 * open; by default it is resolved from the installed sql.js package.
 */
export function setSqlJsWasmDir(dir: string): void {
  wasmDir = dir;
}

/** Load sql.js once per process: compiling the WASM module is the expensive part of opening. */
export function loadSqlJs(): Promise<SqlJsStatic> {
  loading ??= initSqlJs({
    // Not a literal path: a bundler must not try to resolve it (bundled hosts set wasmDir).
    locateFile: (file: string) => path.join(wasmDir ?? path.dirname(require.resolve(['sql.js', 'dist', 'sql-wasm.wasm'].join('/'))), file),
  }).catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}
