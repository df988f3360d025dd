// The pinned Claude Code (.tools/remote, `npm run setup:remote`) as a remote child in a UI flow,
// pointed at the flow's model server (Anthropic Messages SSE). Machine-scoped settings of a
// remote window (code-server's extension host is one) are read from its Machine settings, so
// they are written there too; the flow passes the returned user-data folder to code-server.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../../scripts/e2e/paths.mjs';

export const CLAUDE_BIN = join(repoRoot, '.tools', 'remote', 'node_modules', '.bin', 'claude');
export const CLAUDE_PINNED = '2.1.332';

/**
 * Folders for one flow: Claude's own state and code-server's user data (outside the temp dir,
 * as the remote tier keeps them). Made on first use, removed at exit.
 */
export function claudeFlowDirs(prefix) {
  const homes = join(repoRoot, '.tools', 'remote', 'homes');
  mkdirSync(homes, { recursive: true });
  const dirs = { claudeHome: mkdtempSync(join(homes, `${prefix}-claude-`)), userDataDir: mkdtempSync(join(homes, `${prefix}-ud-`)) };
  process.once('exit', () => {
    rmSync(dirs.claudeHome, { recursive: true, force: true });
    rmSync(dirs.userDataDir, { recursive: true, force: true });
  });
  return dirs;
}

/** The `arbor.remote.claudeCode.*` settings (also written as Machine settings) for this model server. */
export function claudeSettings(model, dirs) {
  if (!existsSync(CLAUDE_BIN)) throw new Error(`${CLAUDE_BIN} is not installed. Run: npm run setup:remote`);
  const remote = {
    'arbor.remote.claudeCode.command': CLAUDE_BIN,
    'arbor.remote.claudeCode.model': 'claude-sonnet-4-5',
    'arbor.remote.claudeCode.home': dirs.claudeHome,
    'arbor.remote.claudeCode.env': {
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${model.port}`,
      ANTHROPIC_API_KEY: 'dummy',
      CLAUDE_CODE_MAX_RETRIES: '0',
      HOME: dirs.claudeHome,
    },
  };
  mkdirSync(join(dirs.userDataDir, 'Machine'), { recursive: true });
  writeFileSync(join(dirs.userDataDir, 'Machine', 'settings.json'), `${JSON.stringify(remote, null, 2)}\n`);
  return remote;
}
