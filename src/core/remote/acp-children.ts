import type * as acp from '@agentclientprotocol/sdk/unstable';

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
