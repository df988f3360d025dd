import { SANDBOX_MODES } from '../policy/sandbox';
import type { AcpChildrenFactory } from './acp-children';
import { AcpLink, KeptLink } from './acp-link';
import { linkCaps, type OpenedProcess, processSpec, untilExit } from './acp-open';
import type { AcpProcessSource } from './acp-source';
import { AcpTurn, EOF_GRACE_MS, loadAcpSdk } from './acp-turn';
import type { AcpAgentSettings } from './settings';
import type { RemoteDriver } from './types';

// The `acp` provider's driver: one per configured ACP agent (or placement), its turns each an
// `AcpTurn`, and the link it may keep across them (decision 0077).

/** How long a kept link (decision 0077) stays open with no session on it before its process is closed. */
export const KEPT_LINK_IDLE_MS = 30_000;

/** A request on a link by method name (an extension method such as `_arbor/sync/*`); its answer, or the agent's exit as an error. */
export type LinkCall = (method: string, params: unknown) => Promise<unknown>;

/** An ACP driver that may keep a link across turns: `close` ends it (the placement closes). */
export interface AcpDriver extends RemoteDriver {
  close(): Promise<void>;
  /**
   * Runs `fn` with requests on the kept link of `opened` (the one the source's turns share, made
   * and initialized now if none is live), held for `fn`'s time: the placed node's workspace sync
   * (decision 0081) rides on the connection its sessions use.
   */
  withLink<T>(opened: OpenedProcess, fn: (call: LinkCall) => Promise<T>): Promise<T>;
}

/**
 * The `acp` provider's driver (issue 14, decision 0040): any configured ACP agent, spawned
 * in its own process group for one turn. `initialize` advertises no `fs` or `terminal`
 * capability (such requests are answered method-not-found by the SDK: nothing is registered
 * for them), `session/new` gets the child's absolute cwd and no MCP servers, the sandbox goes
 * to the agent's own mode through the configured mode table, then `session/prompt`. Its
 * updates become the child's log through the sink; a cancel sends `session/cancel`, waits
 * briefly for `cancelled`, then kills the group. A process source that says `keep` gets one
 * link for all its turns instead (decision 0077): each child a session on it.
 */
export function acpDriver(
  settings: AcpAgentSettings,
  secrets: () => readonly string[] = () => [],
  children?: AcpChildrenFactory,
  source?: AcpProcessSource,
  program = `acp:${settings.name}`,
  /** The store's folder: a confined local agent gets a private temp folder in it (decision 0122, amended s60). */
  storeDir?: string,
): AcpDriver {
  const kept = new KeptLink(KEPT_LINK_IDLE_MS, EOF_GRACE_MS);
  return {
    program,
    toolPrefix: 'acp',
    ...(settings.turnTimeoutMs ? { turnTimeoutMs: settings.turnTimeoutMs } : {}),
    // A table that is given must name the mode: the agent is never run wider than the child may.
    supports: (mode) => !settings.modes || (SANDBOX_MODES.includes(mode) && typeof settings.modes[mode] === 'string'),
    runTurn: (ctx, sink) => new AcpTurn(settings, program, ctx, sink, secrets(), kept, children, source, storeDir).run(),
    close: () => kept.close(),
    async withLink(opened, fn) {
      const acp = await loadAcpSdk();
      const spec = await processSpec(settings, { ...opened, keep: true }, '/', secrets());
      if (!spec) throw new Error(`${opened.command} was not found on PATH; fix the placement's settings.`);
      const link = await kept.take(() => new AcpLink(acp, spec, opened.preamble, linkCaps(!!children)));
      try {
        await untilExit(link.initialize(), link);
        return await fn((method, params) => untilExit(link.conn.agent.request(method, params), link));
      } finally {
        kept.release();
      }
    },
  };
}
