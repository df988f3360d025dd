import type { Agent } from '../agent/agent';
import type { PriceBook } from '../cost/prices';
import type { Spend } from '../cost/spend';
import type { LiveWhat } from '../live/changes';
import type { SessionLive } from '../live/state';
import type { ApprovalPort } from '../policy/approval';
import type { ScopeRegistry } from '../scope/registry';
import type { Budget } from '../session/budget';
import type { SandboxMode } from '../session/events';
import type { Session } from '../session/session';
import type { Store } from '../store/store';
import type { Tool } from '../tools/tool';
import type { AgentLookup } from './agent-request';
import type { AgentFactory } from './composition';
import type { SubagentProvider, WorktreePort } from './types';

/** What the subagent runtime is given by the composition root (`harness/parts.ts`). */
export interface RuntimeDeps {
  store: Store;
  tools: ScopeRegistry<Tool>;
  build: AgentFactory;
  /** The resident agent of a session, if any (the caller of a tool is always resident). */
  resident(id: string): Agent | undefined;
  /** The resident agent, or a cold resume of a root session (settlement notices wake parents). */
  resolve(id: string): Promise<Agent>;
  /** The resident agent's session, else the stored one read from the store. */
  read(id: string): Promise<Session>;
  /** The deployment's deepest delegation; read at each start, so a settings change reaches the next child. */
  maxDepth: () => number;
  /** The deployment has a human approval service (a port). */
  approvalPort?: ApprovalPort;
  /** The deployment's approval policy (what a session without an override runs under); read at each child's start. */
  defaultApproval: () => 'ask' | 'never';
  /**
   * What a delegated child does with requests needing approval: refuse (default) or ask the
   * human. Read when a child starts or resumes, so a settings change reaches the next one.
   */
  childApproval: () => 'never' | 'escalate';
  /** How long a settled Activation stays resident before it is released; read each time one settles. */
  releaseDelayMs: () => number;
  /** Children running at once, harness-wide (the rest queue); default 8. */
  maxConcurrentChildren?: number;
  escalateTimeoutMs?: number;
  providers?: SubagentProvider[];
  /** Throws (a `BudgetInputError`) when a child's budget is more than the parent has left (decision 0034). */
  checkChildBudget?: (parentId: string, budget: Budget) => void;
  /** Prices for the cost `list_agents` shows (absent: tokens only). */
  prices?: () => PriceBook;
  /** What a budgeted subtree has spent, from the budget guard (absent: not budgeted). */
  budgetSpent?: (id: string) => Spend | undefined;
  /** Live state the log does not show moved (the harness's change stream, decision 0054); must not throw. */
  report?: (id: string, what: LiveWhat) => void;
  /** The one live-state assembler (`Harness.liveOf`), for `list_agents`; absent: what the runtime knows alone. */
  liveOf?: (id: string) => SessionLive;
  /** Agents defined in files (decision 0056); absent: a request naming one fails with UNKNOWN_AGENT. */
  agents?: AgentLookup;
  /** The deployment's sandbox (what a session without an override runs under); read at each start. */
  defaultSandbox?: () => SandboxMode;
  /**
   * Asked before a child is created, after every other check (Claude Code's `SubagentStart`
   * hook): a returned reason vetoes the start (`HOOK_BLOCKED`, nothing is created); undefined
   * instead of a promise means no check applies (the start goes on without an await). Contract:
   * must not throw (a throw or a rejection vetoes: fail closed).
   */
  beforeStart?: (c: ChildStart) => Promise<string | undefined> | undefined;
  /** Makes a child's own git worktree (`isolation: 'worktree'`, decision 0060); absent: such a start is refused. */
  worktrees?: WorktreePort;
}

/** A child about to start, as a `beforeStart` check sees it. */
export interface ChildStart {
  parentId: string;
  depth: number;
  provider: string;
  mode: 'one-shot' | 'continuable';
  label?: string;
  prompt: string;
  /** The delegating turn's Stop (undefined: none reaches this start): a check that runs a program ends with it. */
  signal: AbortSignal | undefined;
}

export type Mode = 'one-shot' | 'continuable';
