import type * as Acp from '@agentclientprotocol/sdk/unstable';
import type { SandboxMode } from '../session/events';
import type { AcpLink } from './acp-link';
import { namespaceSpec } from './pid-namespace';
import { type ProcessSpec, programEnv, resolveCommand } from './process';
import { exitPhrase, record } from './run';
import { type AcpAgentSettings, stopTiming } from './settings';

// How an ACP link is opened (decisions 0040, 0077, 0081): the process spec a turn (or a
// placement's workspace sync) starts the agent with, the capabilities the client advertises,
// and the wait for an answer that ends when the agent's process does. Shared by the turn
// (`acp.ts`'s AcpTurn) and by the driver's `withLink`, which the placed node's sync uses.

/** What a process source opens (a placement's transport, decision 0074). */
export interface OpenedProcess {
  command: string;
  args: string[];
  env: Record<string, string>;
  preamble?: string;
  /** The process serves many sessions and is kept across turns and children (decision 0077): one link per source. */
  keep?: boolean;
}

/** The agent's process: the configured command (or the source's), its environment from the allow-list, secrets out; undefined when the command is not found. */
export async function processSpec(
  settings: AcpAgentSettings,
  opened: OpenedProcess | undefined,
  cwd: string,
  secrets: readonly string[],
): Promise<ProcessSpec | undefined> {
  const env = programEnv({ ...(opened ? opened.env : settings.env) }, process.env, secrets);
  env.CODEX_CONFIG = confinedCodexConfig(env.CODEX_CONFIG);
  const command = resolveCommand(opened?.command ?? settings.command, env.PATH);
  if (!command) return undefined;
  // A kept link outlives any one child's folder: its process works from the root, its sessions name their own cwd.
  return {
    command,
    args: opened?.args ?? settings.args ?? [],
    cwd: opened?.keep ? '/' : cwd,
    env,
    stdin: 'pipe',
    ...stopTiming(settings),
    ...(await namespaceSpec()),
  };
}

/**
 * codex-acp's `CODEX_CONFIG` (its documented variable: JSON merged into each session's config,
 * above every `config.toml`) with no writable root but the session's own (decision 0122, amended
 * in s58): the user's `[sandbox_workspace_write] writable_roots` let a workspace-write child
 * write outside its workspace (codex-acp's per-turn policy names none, Codex adds the config's).
 * The deployment's own `CODEX_CONFIG` is kept otherwise; one that is no JSON object (codex-acp
 * would not start on it; `readAcpAgents` says so) is replaced. Other agents do not read it.
 */
export function confinedCodexConfig(own: string | undefined): string {
  const base = jsonObject(own) ?? {};
  const sww = jsonObject(base.sandbox_workspace_write) ?? {};
  return JSON.stringify({ ...base, sandbox_workspace_write: { ...sww, writable_roots: [] } });
}

/** `v` (or the JSON text `v`) as a plain object, or undefined. */
export function jsonObject(v: unknown): Record<string, unknown> | undefined {
  let o = v;
  if (typeof v === 'string')
    try {
      o = JSON.parse(v);
    } catch {
      return undefined;
    }
  return record(o) ? o : undefined;
}

/** No `fs` or `terminal` (such requests are answered method-not-found); `subagents` when the child's sub-sessions are mirrored. */
export function linkCaps(subagents: boolean): Acp.ClientCapabilities {
  return { fs: { readTextFile: false, writeTextFile: false }, terminal: false, ...(subagents ? { subagents: {} } : {}) };
}

/**
 * What `session/new` and `session/load` carry in `_meta` for a child in `sandbox` (decision 0122,
 * amended in s58): a confined child's Claude Code reads no settings file and no `.mcp.json`
 * (`settingSources: []`, the agent SDK's option that claude-agent-acp passes through from
 * `_meta.claudeCode.options`), since their permission rules run commands Arbor's `reject_once`
 * never hears of, unconfined. Without the project source it reads no `CLAUDE.md` either: the
 * `instructions` Arbor read for it (`claudeInstructions`) are appended to Claude Code's own system
 * prompt instead (the SDK's `systemPrompt` preset with `append`, which the adapter takes from the
 * same options, after its own). Other agents ignore a `_meta` key that is not theirs (ACP).
 * In `full-access` the user's settings apply, as for the `claude-code` provider.
 */
export function sessionMeta(sandbox: SandboxMode, instructions = ''): { _meta?: Record<string, unknown> } {
  if (sandbox === 'full-access') return {};
  const systemPrompt = instructions ? { systemPrompt: { type: 'preset', preset: 'claude_code', append: instructions } } : {};
  return { _meta: { claudeCode: { options: { settingSources: [], ...systemPrompt } } } };
}

/** The agent's process left before it answered. */
export class AgentExit extends Error {}

/** A request's answer, or the agent's exit (it crashed, or never answered before leaving) as an AgentExit; `also` may end the wait first. */
export async function untilExit<T>(p: Promise<T>, link: AcpLink, also?: Promise<never>): Promise<T> {
  let settled = false;
  const exited = link.proc.exited.then(async (exit) => {
    await delay(50); // an answer written just before the exit is read first
    if (settled) return undefined as never;
    throw new AgentExit(exit.spawnError ? `could not start: ${exit.spawnError}` : `exited (${exitPhrase(exit)})`);
  });
  try {
    return await Promise.race(also ? [p, exited, also] : [p, exited]);
  } finally {
    settled = true;
    exited.catch(() => undefined);
  }
}

export const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref?.());
