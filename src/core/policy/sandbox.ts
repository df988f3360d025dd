import type { ApprovalPolicy, PolicySource, SandboxMode } from '../session/events';
import type { PolicyOverrides } from '../session/folds';

export const SANDBOX_MODES: readonly SandboxMode[] = ['read-only', 'workspace-write', 'full-access'];

/** Where an effective policy value came from: a session event, or the deployment's default. */
export type EffectiveSource = PolicySource | 'deployment';

export interface Effective<T> {
  value: T;
  source: EffectiveSource;
  /** The `seq` of the event that set it; absent for the deployment default. */
  seq?: number;
}

/**
 * The widest any session of a deployment may run under, whatever its own switches say
 * (VS Code's Restricted Mode: read-only, approval never; decision 0125). A session's switch
 * made before it applies stays in its log and holds again once the ceiling is lifted.
 */
export interface PolicyCeiling {
  sandbox?: SandboxMode;
  approval?: ApprovalPolicy;
}

/** VS Code's Restricted Mode as a ceiling: read-only, and nothing that needs approval runs. */
export const RESTRICTED_CEILING: Readonly<Required<PolicyCeiling>> = { sandbox: 'read-only', approval: 'never' };

/** The sandbox a session runs under now: its last `sandbox/mode` event, else the deployment default; never wider than `ceiling`. */
export function effectiveSandbox(overrides: PolicyOverrides, deploymentDefault: SandboxMode, ceiling?: PolicyCeiling): SandboxMode {
  return sandboxWithSource(overrides, deploymentDefault, ceiling).value;
}

/** Like `effectiveSandbox`, keeping who set it (UI badges, delegation audits); a value the ceiling cut is the deployment's. */
export function sandboxWithSource(overrides: PolicyOverrides, deploymentDefault: SandboxMode, ceiling?: PolicyCeiling): Effective<SandboxMode> {
  const o = overrides.sandbox;
  const own: Effective<SandboxMode> = o ? { value: o.value, source: o.source, seq: o.seq } : { value: deploymentDefault, source: 'deployment' };
  const top = ceiling?.sandbox;
  return top && SANDBOX_MODES.indexOf(own.value) > SANDBOX_MODES.indexOf(top) ? { value: top, source: 'deployment' } : own;
}
