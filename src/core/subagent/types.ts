import type { Agent } from '../agent/agent';
import type { Persona } from '../scope/prompt';
import type { Budget } from '../session/budget';
import type { NodePlacement, SandboxMode, SessionEvent, StopReason } from '../session/events';
import type { Session } from '../session/session';
import type { SessionStatus } from '../session/status';
import type { JsonSchema } from '../tools/tool';
import type { WorktreePlace } from '../worktree/checkout';
import type { WorktreeGate } from '../worktree/gate';
import type { StartGate } from './gates';
import type { RemoteDriver } from './remote-driver';

/** What a provider lets a caller set at start. Remote providers declare none. */
export interface Capabilities {
  outputSchema: boolean;
  depthLimit: boolean;
  toolFilter: boolean;
  persona: boolean;
}

export interface SubagentRequest {
  prompt: string;
  label?: string;
  /** The child must answer through a structured-output tool with this (object) schema. */
  outputSchema?: JsonSchema;
  /** Refuse the start if the child's depth would exceed this (and the deployment's limit). */
  maxDepth?: number;
  /** Allow-list of inherited tools; child-local tools are never removed. */
  toolFilter?: string[];
  persona?: Persona;
  model?: string;
  maxTokens?: number;
  /** A budget on the child's subtree (never more than the caller has left; decision 0034). */
  budget?: Budget;
  /** An agent defined in a file (`.arbor/agents/<name>.md`, decision 0056): persona, tools, model and sandbox from it. */
  agent?: string;
  /** Narrow the child's sandbox to this; the runtime never lets it be wider than the caller's. */
  sandbox?: SandboxMode;
  /** Set by the workflow engine: the child is agent `index` of run `runId` (written into its descriptor). */
  workflow?: { runId: string; index: number };
  /** `worktree`: the child works in its own git worktree, its only writable root (decision 0060). */
  isolation?: 'worktree';
  /**
   * Run the child on this configured placement (another host, a container; decision 0074): its
   * provider becomes `placed:<name>`, it gets its own worktree, and its turns run in `arbor acp` there.
   */
  placement?: string;
}

/** What the runtime needs to give a child its own worktree (the harness's `WorktreeService`). */
export interface WorktreePort {
  /** `filesLater`: the entry and branch only, its work read from its branch, the files written only when asked for (a placed child; decisions 0089, 0093). */
  create(childId: string, label: string | undefined, parentRoot: string, opts?: { filesLater?: boolean }): Promise<WorktreePlace>;
  remove(place: WorktreePlace): Promise<void>;
  /** A stored child's worktree gets its files if it was made without them (refused where git may not run); absent: written as is. */
  fill?(dir: string): Promise<void>;
  /** The worktrees' holds: a follow-up to a child working in one being changed waits for the change (decision 0126, amended in s60). */
  readonly gate?: Pick<WorktreeGate, 'waitFor'>;
}

/**
 * A provider owns only the creation difference (DESIGN §7): the seed. The runtime owns the
 * child's durable session, Agent, inbox, Activation, cold resume and disposal.
 */
export interface SubagentProvider {
  name: string;
  capabilities: Capabilities;
  inheritsParentContext: boolean;
  prepare(parent: Session): { seed?: SessionEvent[] };
  // ── remote seam (issue 13, decision 0035) ──
  /** The modes it can run; absent = both. Remote providers: ['one-shot']. Checked before anything is created. */
  modes?: readonly ('one-shot' | 'continuable')[];
  /** Present when the child lives in another program: it runs the child's turn instead of the model loop. */
  remote?: RemoteDriver;
  /**
   * Present when the child runs on a placement (decision 0074): checked at its start (where it
   * runs and the round trip go in its descriptor); such a child always gets its own worktree,
   * the only place its collected changes land.
   */
  placement?: { name: string; check(signal?: AbortSignal): Promise<NodePlacement> };
  /**
   * The tool that starts this provider's children (a remote program's `delegate_*`). Its children
   * get every tool their program has (no `toolFilter` capability): a caller whose tools are limited
   * may start one only when its tools include this one.
   */
  delegationTool?: string;
}

/** How a start relates to its caller's turn. */
export interface StartOptions {
  /** The caller's turn signal: interrupted before publishing → nothing is created; during it → the child's turn ends interrupted. */
  signal?: AbortSignal;
  /** The caller's own gate before each request (a workflow run's slots): the child is created now and waits there, shown queued (`gates.ts`). */
  gate?: StartGate;
}

export type SubagentErrorCode =
  | 'UNKNOWN_PROVIDER'
  | 'UNKNOWN_AGENT'
  | 'UNSUPPORTED_CAPABILITY'
  | 'BAD_MAX_DEPTH'
  | 'BAD_OUTPUT_SCHEMA'
  | 'BAD_REQUEST'
  | 'DEPTH_EXCEEDED'
  | 'UNKNOWN_PARENT'
  | 'UNKNOWN_CHILD'
  | 'NOT_PARENT'
  | 'NOT_CONTINUABLE'
  | 'UNSUPPORTED_SANDBOX'
  | 'DESCRIPTOR'
  | 'STALE_HANDLE'
  | 'CANCELLED'
  | 'READ_ONLY'
  | 'NOT_CANCELLABLE'
  /** Arbor is closing (a reload): nothing was sent; send it again once it has reopened (decision 0100). */
  | 'CLOSING'
  /** `placement` names no configured placement (decision 0074). */
  | 'UNKNOWN_PLACEMENT'
  /** A `SubagentStart` hook vetoed the start (decision 0057). */
  | 'HOOK_BLOCKED'
  /** The child's worktree was applied, discarded or kept (or went with its owner): nothing was sent (decision 0126, amended in s60). */
  | 'WORKTREE_CLOSED';

export class SubagentError extends Error {
  override readonly name: string = 'SubagentError';
  constructor(
    readonly code: SubagentErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** A start that would place the child deeper than allowed. */
export class SubagentDepthError extends SubagentError {
  override readonly name = 'SubagentDepthError';
  constructor(
    readonly depth: number,
    readonly maxDepth: number,
  ) {
    super(
      'DEPTH_EXCEEDED',
      `A subagent at depth ${depth} would exceed the delegation limit (${maxDepth}); do this work yourself or ask the user to raise arbor.subagents.maxDepth.`,
    );
  }
}

export interface OneShotResult {
  childId: string;
  stopReason: StopReason;
  /** The child's final assistant text. */
  text: string;
  /** What the child submitted through the structured-output tool, when an outputSchema was given. */
  output?: unknown;
  error?: string;
}

export interface SubagentRun {
  id: string;
  localAgent: Agent;
  result: Promise<OneShotResult>;
  /** The caller's: releases the child's Agent, listeners and timers (the session stays). */
  dispose(): Promise<void>;
}

export interface ContinuableStart {
  childId: string;
  messageId: string;
}

/** `kept`: a Stop of the child's subtree overtook the message: it is queued, and the child waits paused (decision 0100). */
export type FollowupPath = 'inbox' | 'wake' | 'cold-resume' | 'kept';

export type InterruptOutcome =
  | { accepted: true; effect: 'interrupted' | 'noop'; reason?: 'unknown' | 'one-shot' | 'not-running' }
  | { accepted: false; reason: 'self' | 'not-ancestor' | 'stale-handle' };

export interface AgentListing {
  id: string;
  parent: string;
  depth: number;
  provider?: string;
  label?: string;
  mode?: 'one-shot' | 'continuable';
  /** A remote child's program and its version (`codex`, `codex-cli 0.171.0`). */
  remote?: { program: string; version?: string };
  status?: SessionStatus;
  /** In memory and not released: it may still report, and a follow-up reaches it without a cold resume. */
  resident?: boolean;
  lastStopReason?: StopReason;
  inbox?: number;
  tokens?: { prompt: number; completion: number; cacheHit: number };
  /** Its own cost in USD at the deployment's prices (absent: a model with no price served it). */
  costUsd?: number;
  /** Its subtree's total (itself and everything below it), as the tree shows it collapsed. */
  subtree?: { tokens: number; costUsd?: number };
  /** The budget on its subtree and what the subtree has spent against it. */
  budget?: { maxTokens?: number; maxCostUsd?: number; spentTokens: number; spentUsd?: number };
  /** Some tokens are estimated: a request ended (failed, interrupted) before reporting its usage. */
  tokensEstimated?: true;
  reports?: number;
  /** Set instead of the fields above when the child's log could not be read. */
  diagnostic?: string;
}
