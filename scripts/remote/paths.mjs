// Where the real remote agent programs live for the remote tier (issue 13): pinned npm
// packages installed by scripts/remote/setup.mjs into the ignored .tools/remote/ folder,
// outside the extension's own dependencies. Tests read these paths and assert the versions.
import { join } from 'node:path';
import { toolsDir } from '../e2e/paths.mjs';

/** Exact versions (docs: ../shared/REMOTE.md): bump them here; setup reinstalls when the stamp disagrees. */
export const remoteVersions = Object.freeze({
  codex: '0.171.0',
  claude: '2.1.332',
});

export const remoteDir = join(toolsDir, 'remote');
export const remotePackages = Object.freeze({
  codex: { pkg: '@openai/codex', version: remoteVersions.codex, bin: join(remoteDir, 'node_modules', '.bin', 'codex') },
  claude: { pkg: '@anthropic-ai/claude-code', version: remoteVersions.claude, bin: join(remoteDir, 'node_modules', '.bin', 'claude') },
});
