// Installs a packaged .vsix into an extensions folder the way a user's VS Code does it, with
// code-server's own `--install-extension` (offline, under a second). The folder is then given to
// code-server with --extensions-dir: the extension runs from there, not from the repository.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { codeServerEntry, envWithNode24, node24 } from './paths.mjs';

/**
 * `code-server --install-extension vsix` into `extensionsDir` (created if missing), with its
 * config, data and cache under `scratch` (never $HOME). Returns the installed folder's name
 * (`publisher.name-version`); throws with code-server's output when it fails.
 */
export function installVsix(vsix, { extensionsDir, userDataDir, scratch }) {
  mkdirSync(extensionsDir, { recursive: true });
  const env = {};
  for (const [k, v] of Object.entries(envWithNode24())) if (!/^(VSCODE_|ELECTRON_)/.test(k) && k !== 'NODE_OPTIONS') env[k] = v;
  Object.assign(env, { XDG_CONFIG_HOME: join(scratch, 'config'), XDG_DATA_HOME: join(scratch, 'data'), XDG_CACHE_HOME: join(scratch, 'cache') });
  const r = spawnSync(node24, [codeServerEntry, '--extensions-dir', extensionsDir, '--user-data-dir', userDataDir, '--install-extension', vsix], {
    encoding: 'utf8',
    env,
    timeout: 120_000,
  });
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  if (r.status !== 0) throw new Error(`code-server --install-extension ${vsix} failed (exit ${r.status ?? r.signal}):\n${output}`);
  const installed = readdirSync(extensionsDir).filter((d) => !d.startsWith('.') && d !== 'extensions.json');
  if (installed.length === 0) throw new Error(`code-server --install-extension ${vsix} installed nothing:\n${output}`);
  return installed[0];
}
