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
  /** Who set it, for the error that refuses what it rules out (`CEILING_REMEDY`); absent: the deployment's. */
  by?: CeilingSource;
}

/** Where a ceiling comes from: an explicit CLI `--sandbox`, or VS Code's Restricted Mode. */
export type CeilingSource = 'cli-sandbox' | 'restricted-mode';

/** What the user does to lift each kind of ceiling (a table the compiler checks). */
export const CEILING_REMEDY: Readonly<Record<CeilingSource, (mode: SandboxMode) => string>> = {
  'cli-sandbox': (mode) =>
    `this process was started with --sandbox ${mode}, the widest it runs anything under; rerun with --sandbox full-access to let it run outside the sandbox`,
  'restricted-mode': (mode) => `the workspace is in VS Code's Restricted Mode, which caps Arbor at ${mode}; trust the workspace to lift it`,
};

/** Why an action that would run outside the OS sandbox is refused without asking under `ceiling`, or undefined (no ceiling, or full-access). */
export function beyondCeiling(ceiling: PolicyCeiling | undefined): string | undefined {
  const top = ceiling?.sandbox;
  if (!top || top === 'full-access') return undefined;
  const why = ceiling.by ? CEILING_REMEDY[ceiling.by](top) : `the deployment caps every session at ${top}`;
  return `it would run outside the ${top} sandbox, past the ceiling: ${why} (decision 0125)`;
}

/** VS Code's Restricted Mode as a ceiling: read-only, and nothing that needs approval runs. */
export const RESTRICTED_CEILING: Readonly<Required<PolicyCeiling>> = { sandbox: 'read-only', approval: 'never', by: 'restricted-mode' };

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
