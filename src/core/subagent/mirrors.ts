import type { SessionSummary } from '../session/summary';
import { SubagentError } from './types';

/** What only the live process knows of a mirror: whether its sub-session works, and how to stop it alone. */
export interface MirrorLive {
  /** Its parent in the tree (the remote child, or the mirror it was announced under). */
  parent: string;
  /** The agent says it works (`running`, or `requires_action`). */
  running: boolean;
  /** The agent says it waits for a human (`requires_action`). */
  awaitingApproval: boolean;
  /** `session/cancel` for it alone, resolving once its turn has ended; absent when the agent does not let a client cancel it. */
  cancel?: () => Promise<void>;
  /** Its label, for errors. */
  name: string;
  /** Who runs it, for errors: `the ACP agent "claude"`. */
  owner: string;
}

/**
 * The live state of mirrors (decision 0041): sessions in the tree that a remote program's own
 * sub-sessions are shown as (an ACP agent's `subagent_update` children). No agent of Arbor runs
 * them, so residency says nothing of them; every status reader (the tree, `list_agents`, `arbor
 * acp`) asks here too, and an interrupt of one of them goes through its `cancel`.
 */
export class MirrorRegistry {
  private readonly live = new Map<string, MirrorLive>();

  /** @param changed told when a mirror's state changes (the harness's change stream, decision 0054); must not throw. */
  constructor(private readonly changed: (id: string) => void = () => undefined) {}

  /** Its state now (announced, changed); listeners hear it. */
  set(id: string, state: MirrorLive): void {
    this.live.set(id, state);
    this.changed(id);
  }

  /** It is closed (its owner's turn ended): nothing live is known of it any more. */
  delete(id: string): void {
    if (this.live.delete(id)) this.changed(id);
  }

  isRunning(id: string): boolean {
    return this.live.get(id)?.running ?? false;
  }

  /** Its live state as announced (read-only), or undefined: one lookup for a status question that reads several fields. */
  stateOf(id: string): Readonly<MirrorLive> | undefined {
    return this.live.get(id);
  }

  /** A mirror under this session works (its status reads `waiting` while it does not itself). */
  hasRunningChildren(id: string): boolean {
    for (const m of this.live.values()) if (m.parent === id && m.running) return true;
    return false;
  }

  /**
   * Stop a running mirror alone: its `session/cancel`, resolving once its turn ended.
   * Undefined when it does not run, or when its agent does not let a client cancel it and it is
   * not the one asked for (`asked` false: a subtree's stop, where its owner's stop covers it).
   */
  cancel(id: string, asked: boolean): Promise<void> | undefined {
    const m = this.live.get(id);
    if (!m?.running) return undefined;
    if (m.cancel) return m.cancel();
    if (!asked) return undefined;
    throw new SubagentError(
      'NOT_CANCELLABLE',
      `${m.name} is run by ${m.owner}, which does not let a client stop it alone. Stop its parent in the tree instead.`,
    );
  }

  get size(): number {
    return this.live.size;
  }
}

/**
 * Refuse what a mirror cannot take (a message, a fork): its conversation is the remote
 * program's, Arbor only shows it. Undefined for any other session.
 */
export function mirrorRefusal(id: string, s: SessionSummary | undefined, what: 'message' | 'fork'): SubagentError | undefined {
  const by = s?.remote?.announcedBy;
  if (!by) return undefined;
  const name = s.label ? `"${s.label}"` : id;
  const agent = s.remote!.program.startsWith('acp:') ? `the ACP agent "${s.remote!.program.slice(4)}"` : s.remote!.program;
  return what === 'message'
    ? new SubagentError(
        'READ_ONLY',
        `${name} is run by ${agent} (a sub-session of ${by}); it takes no messages. Its transcript is read-only: message the session that delegated to ${agent} instead.`,
      )
    : new SubagentError(
        'READ_ONLY',
        `${name} is run by ${agent} (a sub-session of ${by}); Arbor only shows it and cannot fork it. Fork the session that delegated to ${agent} instead.`,
      );
}
