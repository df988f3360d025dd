import type { ApprovalPolicy, SandboxMode } from '../session/events';
import { policyOverrides } from '../session/folds';
import type { Session } from '../session/session';

export interface PolicySnapshot {
  sandbox?: SandboxMode;
  approval?: ApprovalPolicy;
}

/**
 * The parent's explicit overrides at the moment of delegation. Call it synchronously,
 * before the first await of a start: a switch the parent makes afterwards belongs to the
 * parent's future, never to this child. Deployment defaults are not copied.
 */
export function capturePolicy(parent: Session): PolicySnapshot {
  const o = policyOverrides(parent.events);
  const snap: PolicySnapshot = {};
  if (o.sandbox) snap.sandbox = o.sandbox.value;
  if (o.approval) snap.approval = o.approval.value;
  return snap;
}
