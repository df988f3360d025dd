import type * as core from '../core/session/events';
import type { SessionStatus } from '../core/session/status';
import type * as wire from '../protocol';

// src/protocol.ts imports nothing (the webview must see nothing of core), so it restates the
// unions it carries from core word for word. These checks hold each restatement equal to its
// source: a word added, renamed or dropped on either side fails `tsc` here (decision 0053).
// Nothing reads the values; the types are the test.

/** True exactly when A and B are the same union (each assignable to the other). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

export const WIRE_UNIONS_MATCH_CORE: {
  status: Same<wire.NodeStatus, SessionStatus>;
  stopReason: Same<wire.StopReason, core.StopReason>;
  messageSource: Same<wire.MessageSourceKind, core.MessageSourceKind>;
  sandbox: Same<wire.SandboxMode, core.SandboxMode>;
  approval: Same<wire.ApprovalPolicy, core.ApprovalPolicy>;
  origin: Same<wire.Origin, core.Origin>;
  goalPhase: Same<wire.GoalPhase, core.GoalPhase>;
  worktreeState: Same<wire.WorktreeState, core.WorktreeState>;
  placement: Same<wire.PlacementView, core.NodePlacement>;
} = {
  status: true,
  stopReason: true,
  messageSource: true,
  sandbox: true,
  approval: true,
  origin: true,
  goalPhase: true,
  worktreeState: true,
  placement: true,
};
