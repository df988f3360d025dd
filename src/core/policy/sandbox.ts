import type { PolicySource, SandboxMode } from '../session/events';
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

/** The sandbox a session runs under now: its last `sandbox/mode` event, else the deployment default. */
export function effectiveSandbox(overrides: PolicyOverrides, deploymentDefault: SandboxMode): SandboxMode {
  return sandboxWithSource(overrides, deploymentDefault).value;
}

/** Like `effectiveSandbox`, keeping who set it (UI badges, delegation audits). */
export function sandboxWithSource(overrides: PolicyOverrides, deploymentDefault: SandboxMode): Effective<SandboxMode> {
  const o = overrides.sandbox;
  return o ? { value: o.value, source: o.source, seq: o.seq } : { value: deploymentDefault, source: 'deployment' };
}
