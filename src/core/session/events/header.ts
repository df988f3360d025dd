// A session's header: written once when the session is created, never an event.

export type Origin = 'user' | 'subagent' | 'fork';

export interface SessionHeader {
  id: string;
  createdAt: string;
  title?: string;
  origin: Origin;
  parentSession?: string;
  /** Durable, monotonic lower bound of the delegation depth (root = 0). */
  delegationDepth?: number;
  /** Number of events copied from a fork parent (the seed), before `session/end-seed`. */
  seedLength?: number;
  cwd?: string;
  agentPreset?: string;
  /** A root conversation started with an agent defined in a file (decision 0056): its composition as read then. */
  agent?: RootAgent;
  /** One way of a "Try N ways" group (decision 0061): the group is the set of sessions whose header names it. */
  bestOf?: BestOfWay;
}

/** A way's place in its group, written once in its header (decision 0061). */
export interface BestOfWay {
  group: string;
  /** 1-based, in the order the ways were asked for. */
  way: number;
  /** How many ways the group was started with. */
  of: number;
  /** The conversation and the `seq` of the message the group was started from. */
  source: string;
  seq: number;
  /** The prompt each way runs. */
  prompt: string;
  /** This way's own model (absent: the conversation's). */
  model?: string;
  /** The agent file this way runs as (absent: the conversation's agent). */
  agent?: string;
}

/** The composition a root conversation took from an agent file; a user fork keeps it, a child does not. */
export interface RootAgent {
  name: string;
  persona?: string;
  /** The persona is the whole system prompt (a user's fork of a subagent started with one, decision 0006 amended). */
  personaComplete?: boolean;
  toolFilter?: string[];
  model?: string;
}
