import type * as acp from '@agentclientprotocol/sdk/unstable';
import type { TurnBounds } from '../subagent/remote-bounds';
import type { RemoteTurnContext } from './types';

/**
 * An ACP agent's own sub-sessions, as it announces them with the (unstable) `subagent_update`
 * on the child's connection (issue 14.3): the driver hands each announcement and each of their
 * updates here, in order, and closes the view when the child's turn ends.
 */
export interface AcpChildren {
  /** A sub-session announced, or its title, description or state changed. */
  announce(update: acp.SubagentUpdate): Promise<void>;
  /** One update of a sub-session's own session (an id never announced is counted, not shown). */
  update(externalId: string, update: acp.SessionUpdate): Promise<void>;
  /** The Arbor session that mirrors this ACP sub-session, once announced (who asks, when it asks permission). */
  sessionOf(externalId: string): string | undefined;
  /** The child's turn is over: every sub-session still open is closed (interrupted when the turn was stopped). */
  close(how: 'completed' | 'interrupted'): Promise<void>;
}

/**
 * What opens a child's view of the agent's own sub-sessions (`subagent_update`, decision 0041):
 * `cancel` sends `session/cancel` for one of them, `program` is the provider (`acp:<name>`).
 * Absent, they are counted and skipped, and the agent is not told the client understands them.
 */
export type AcpChildrenFactory = (
  ctx: RemoteTurnContext,
  cancel: (externalId: string) => Promise<void>,
  program: string,
  /** The turn's bounds (decision 0044): the sub-sessions' output counts against the child's turn. */
  bounds?: TurnBounds,
) => AcpChildren;
