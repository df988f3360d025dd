import type * as Acp from '@agentclientprotocol/sdk/unstable';
import type { AcpLink } from './acp-link';
import { namespaceSpec } from './pid-namespace';
import { type ProcessSpec, programEnv, resolveCommand } from './process';
import { exitPhrase } from './run';
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

/** No `fs` or `terminal` (such requests are answered method-not-found); `subagents` when the child's sub-sessions are mirrored. */
export function linkCaps(subagents: boolean): Acp.ClientCapabilities {
  return { fs: { readTextFile: false, writeTextFile: false }, terminal: false, ...(subagents ? { subagents: {} } : {}) };
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
