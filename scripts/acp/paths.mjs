// Where the ACP test tools live: the third-party ACP client (acpx, in .tools/acp/) and the
// three real ACP agents the `acp` remote provider is tested against (in .tools/acp-agents/),
// all installed by scripts/acp/setup.mjs into the ignored .tools/ folder.
import { join } from 'node:path';
import { toolsDir } from '../e2e/paths.mjs';

/** Exact version: bump it here; setup.mjs reinstalls when the stamp disagrees. */
export const acpxVersion = '0.19.1';
export const acpToolsDir = join(toolsDir, 'acp');
export const acpxPackage = join(acpToolsDir, 'node_modules', 'acpx');
/** acpx's CLI, run as `node acpxEntry …` (it declares Node >= 22.13 but runs on this project's Node 20.19+ for what the tests use). */
export const acpxEntry = join(acpxPackage, 'dist', 'cli.js');

/** The real ACP agents (docs/acp-agents-facts.md), in a project of their own. */
export const acpAgentsDir = join(toolsDir, 'acp-agents');
const modules = join(acpAgentsDir, 'node_modules');

/**
 * Exact versions: bump them here (and in test/support/acp-agents.ts); setup.mjs reinstalls
 * when the stamp or an installed package.json disagrees. `entry` is what a test runs with
 * `node`; `bin` is the npm bin link to the same file.
 */
export const acpAgents = Object.freeze({
  claude: {
    pkg: '@agentclientprotocol/claude-agent-acp',
    version: '0.101.0',
    entry: join(modules, '@agentclientprotocol', 'claude-agent-acp', 'dist', 'index.js'),
    bin: join(modules, '.bin', 'claude-agent-acp'),
  },
  codex: {
    pkg: '@agentclientprotocol/codex-acp',
    version: '2.6.0',
    entry: join(modules, '@agentclientprotocol', 'codex-acp', 'dist', 'index.js'),
    bin: join(modules, '.bin', 'codex-acp'),
  },
  // SDK 1.9.0 only for its scripted example agent (no model): text, a read tool call, an
  // edit tool call behind a permission request, end_turn.
  example: {
    pkg: '@agentclientprotocol/sdk',
    version: '1.9.0',
    entry: join(modules, '@agentclientprotocol', 'sdk', 'dist', 'examples', 'agent.js'),
  },
});

/**
 * What the adapters bring along: codex-acp asks for `@openai/codex@^0.166.0` (a range, so
 * pinned here through npm `overrides`); claude-agent-acp pins its Claude agent SDK itself.
 * Checked by setup.mjs like the agents.
 */
export const acpAgentsBundled = Object.freeze({
  '@openai/codex': '0.166.0',
  '@anthropic-ai/claude-agent-sdk': '0.3.318',
});
