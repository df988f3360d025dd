import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_INSTRUCTION_BYTES, readInstructions } from '../project/instructions';
import type { SandboxMode } from '../session/events';

// The instructions a confined Claude Code child is given as words (decision 0122, amended in s58).
// Such a child runs with no setting source (`--setting-sources ''`, or `settingSources: []` through
// claude-agent-acp), and Claude Code ties its reading of `CLAUDE.md` to those sources: without
// this, the repository's and the user's instructions never reach it. Arbor reads them itself —
// no settings file — and appends them to Claude Code's own system prompt.

/**
 * The text to append to a confined (`read-only`, `workspace-write`) Claude Code child's system
 * prompt: the user's `CLAUDE.md` (in Claude Code's config folder), then at each level from the
 * repository root (the nearest folder above `cwd` holding `.git`; `cwd` itself when none does)
 * down to `cwd`, its `AGENTS.md` and its `CLAUDE.md` (one that is the same file read once), capped
 * as Arbor's own instructions are. '' in `full-access` (Claude Code reads them itself there) and
 * when there is no file.
 */
export function claudeInstructions(sandbox: SandboxMode, cwd: string, configDir: string): string {
  if (sandbox === 'full-access') return '';
  const root = repositoryRoot(cwd);
  return readInstructions({ root, cwd, userFile: path.join(configDir, 'CLAUDE.md'), maxBytes: DEFAULT_INSTRUCTION_BYTES, every: true }).text;
}

/** The ACP agents (`initialize`'s `agentInfo.name`) that are Claude Code: claude-agent-acp (once claude-code-acp). */
const CLAUDE_ACP = /(^|\/)claude-(agent|code)-acp$/;

/** Whether an ACP agent that names itself `name` is Claude Code's adapter, the one agent that takes the instructions. */
export function isClaudeAcp(name: string | undefined): boolean {
  return name !== undefined && CLAUDE_ACP.test(name);
}

/** Claude Code's config folder for a process with environment `env`: `CLAUDE_CONFIG_DIR`, else `~/.claude`. */
export function claudeConfigDir(env: Readonly<Record<string, string | undefined>>): string {
  return env.CLAUDE_CONFIG_DIR || path.join(env.HOME || os.homedir(), '.claude');
}

/** The nearest folder at or above `cwd` that holds `.git`; `cwd` when none does. */
function repositoryRoot(cwd: string): string {
  const start = path.resolve(cwd);
  for (let d = start; ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, '.git'))) return d;
    if (path.dirname(d) === d) return start;
  }
}
