import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SandboxMode } from '../session/events';

// A project configuration an ACP agent reads without asking and that no option of its turns off
// (decision 0122, amended in s58): codex-acp marks every session's folder `trusted` in Codex's
// config, so the repository's own `.codex/config.toml` — its MCP servers and hooks, started on
// the host outside every sandbox — applies. A confined child of such an agent is not started there.

/** The agents (`initialize`'s `agentInfo.name`) that trust the session's folder themselves. */
const TRUSTS_PROJECT = /(^|\/)codex-acp$/;

/**
 * The `.codex/config.toml` Codex would read for `cwd` — in `cwd` or a folder above it up to the
 * project root (the nearest one holding `.git`, as Codex finds it; `cwd` itself when none does) —
 * or undefined.
 */
export function codexProjectConfig(cwd: string): string | undefined {
  const dirs: string[] = [];
  for (let d = path.resolve(cwd); ; d = path.dirname(d)) {
    dirs.push(d);
    if (fs.existsSync(path.join(d, '.git'))) break;
    if (path.dirname(d) === d) return has(path.resolve(cwd));
  }
  for (const d of dirs) {
    const found = has(d);
    if (found) return found;
  }
  return undefined;
}

const has = (dir: string): string | undefined => {
  const p = path.join(dir, '.codex', 'config.toml');
  return fs.existsSync(p) ? p : undefined;
};

/** Why a child of `agent` in `sandbox` may not start in `cwd`, as the error a user reads; undefined when it may. */
export function projectConfigRefusal(agent: string | undefined, label: string, sandbox: SandboxMode, cwd: string): string | undefined {
  if (sandbox === 'full-access' || !agent || !TRUSTS_PROJECT.test(agent)) return undefined;
  const found = codexProjectConfig(cwd);
  if (!found) return undefined;
  return (
    `ACP_PROJECT_CONFIG: ${label} (${agent}) trusts the folder it works in and would apply ${found}: ` +
    `MCP servers and hooks it names run on the host outside the ${sandbox} sandbox, and no option of the agent turns that off, so the task was not run. ` +
    `Remove or rename that file if you did not put it there, run the task with full access, or use the codex provider (Codex asks before it trusts a project).`
  );
}
