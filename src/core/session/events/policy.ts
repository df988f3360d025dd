import type { Budget } from '../budget';
import type { Base } from './base';

// What a session may do and spend: sandbox, approval, grants, budget; last event wins. Not model history.

export type SandboxMode = 'read-only' | 'workspace-write' | 'full-access';
export type ApprovalPolicy = 'ask' | 'never';
export type PolicySource = 'user' | 'delegation';

export interface SandboxModeEvent extends Base<'sandbox/mode'> {
  mode: SandboxMode;
  source: PolicySource;
}

export interface ApprovalPolicyEvent extends Base<'approval/policy'> {
  policy: ApprovalPolicy;
  source: PolicySource;
}

/** What an "allow for this conversation" covers: one command prefix, or one exact (real) path. */
export interface GrantScope {
  kind: 'command-prefix' | 'path';
  value: string;
}

/**
 * The user allowed a tool for this conversation within a scope, or (`revoked: true`)
 * took that back. Last event per `grantId` wins; it only skips the ask, never the sandbox.
 */
export interface ApprovalGrantEvent extends Base<'approval/grant'> {
  grantId: string;
  tool: string;
  scope: GrantScope;
  /** The sandbox mode the user granted under; the grant does not hold in a narrower one. */
  sandbox?: SandboxMode;
  revoked?: boolean;
}

/** Who set a budget: the human, a parent delegating, or a fork told explicitly to carry one. */
export type BudgetSource = 'user' | 'delegation' | 'fork';

/**
 * A budget on this session's delegation subtree (decision 0034); last event wins, `null`
 * removes it. A fork's seed never hands one on: only an explicit `source: 'fork'` event does.
 */
export interface BudgetSetEvent extends Base<'budget/set'> {
  budget: Budget | null;
  source: BudgetSource;
}
