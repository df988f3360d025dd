import type { OpenedProcess } from './acp-open';
import type { RemoteOutcome, RemoteTurnContext } from './types';

// Where a placed ACP child's process comes from (a placement's transport, decision 0074), and
// the phases of a turn over it that the source is told of.

/**
 * Where an ACP child's process comes from instead of a configured command (a placement's
 * transport, decision 0074): each turn opens one connection; the child's session lives on the
 * other side, so a later turn loads it (`session/load` of `ctx.resume`) instead of a new one.
 */
export interface AcpProcessSource {
  /** This turn's process, and the folder the agent's session works in as the other side sees it. */
  open(ctx: RemoteTurnContext): Promise<OpenedProcess & { sessionCwd: string }>;
  /** The process left before the turn finished and Arbor did not stop it (the link dropped): how the turn ends. */
  dropped(what: string): RemoteOutcome;
  /** Told when a phase of a turn is over (its start and end, `performance.now()`): the bench's breakdown. Must not throw. */
  phase?(childId: string, phase: AcpPhase, start: number, end: number): void;
}

/** A turn's phases over a process source: `start` = the process started and initialized (or a kept link taken), `session` = session/new or load and its mode, `prompt` = the prompt to its answer. */
export type AcpPhase = 'start' | 'session' | 'prompt';
