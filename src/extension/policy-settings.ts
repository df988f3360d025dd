import type { ApprovalPolicy, SandboxMode } from '../protocol';

// `arbor.policy.sandbox`, `arbor.policy.network` and `arbor.policy.approval` (decision 0125, amended):
// the user's own value (or the default) is the widest; a workspace's or a folder's
// `.vscode/settings.json` — a cloned repository's, written by whoever made it — can only
// narrow it. Pure: the host hands it `WorkspaceConfiguration.inspect`.

/** The three settings and their values (keys under `arbor.`). */
export interface PolicyValues {
  'policy.sandbox': SandboxMode;
  'policy.approval': ApprovalPolicy;
  'policy.network': boolean;
}
export type PolicyKey = keyof PolicyValues;

/** A value as a table key: a boolean's is `'true'` / `'false'`. */
type Name<T> = T extends boolean ? `${T}` : T;

/**
 * How wide each value is, narrowest 0. A `Record` over each setting's values: a new sandbox
 * mode or approval policy does not compile until it is ranked here.
 */
export const POLICY_RANKS: { readonly [K in PolicyKey]: Readonly<Record<Name<PolicyValues[K]>, number>> } = {
  'policy.sandbox': { 'read-only': 0, 'workspace-write': 1, 'full-access': 2 },
  // `never` refuses what the sandbox does not allow; `ask` may let it run.
  'policy.approval': { never: 0, ask: 1 },
  'policy.network': { false: 0, true: 1 },
};

/** package.json's defaults (policy-settings.test.ts holds them and the ranks to it). */
export const POLICY_DEFAULTS: Readonly<PolicyValues> = { 'policy.sandbox': 'workspace-write', 'policy.approval': 'ask', 'policy.network': false };

export const POLICY_KEYS = Object.keys(POLICY_RANKS) as PolicyKey[];

/** A setting's values by layer: the shape of `vscode.WorkspaceConfiguration.inspect`. */
export type InspectPolicy = (key: PolicyKey) => { globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown } | undefined;

/** The layers that may only narrow, as `inspect` names them, and where they live. */
const NARROWING_LAYERS = {
  workspaceValue: "this workspace's settings (.vscode/settings.json, or the .code-workspace file)",
  workspaceFolderValue: "a workspace folder's .vscode/settings.json",
} as const;
type NarrowingLayer = keyof typeof NARROWING_LAYERS;

/** `v` if it is one of `key`'s values (a hand-edited settings.json may hold anything), else undefined. */
export function policyValue<K extends PolicyKey>(key: K, v: unknown): PolicyValues[K] | undefined {
  const ranks: Record<string, number> = POLICY_RANKS[key];
  return typeof v === typeof POLICY_DEFAULTS[key] && Object.hasOwn(ranks, String(v)) ? (v as PolicyValues[K]) : undefined;
}

const rank = <K extends PolicyKey>(key: K, v: PolicyValues[K]): number => (POLICY_RANKS[key] as Record<string, number>)[String(v)];

/** Whether `value` is wider than `than` for `key`. */
export function widerThan<K extends PolicyKey>(key: K, value: PolicyValues[K], than: PolicyValues[K]): boolean {
  return rank(key, value) > rank(key, than);
}

/** The user's own value, else the default: the widest `key` can be here. */
export function userPolicy<K extends PolicyKey>(key: K, globalValue: unknown): PolicyValues[K] {
  return policyValue(key, globalValue) ?? POLICY_DEFAULTS[key];
}

/** A workspace or folder value wider than the user's, not applied. */
export interface IgnoredWider {
  key: PolicyKey;
  layer: NarrowingLayer;
  value: PolicyValues[PolicyKey];
  /** The user's own value (or the default) it would have widened. */
  user: PolicyValues[PolicyKey];
}

/** One setting: the narrowest of the user's (or default) value and the workspace's and folder's; the wider ones ignored. */
export function narrowedPolicy<K extends PolicyKey>(key: K, inspect: InspectPolicy): { value: PolicyValues[K]; ignored: IgnoredWider[] } {
  const layers = inspect(key);
  const user = userPolicy(key, layers?.globalValue);
  let value = user;
  const ignored: IgnoredWider[] = [];
  for (const layer of Object.keys(NARROWING_LAYERS) as NarrowingLayer[]) {
    const v = policyValue(key, layers?.[layer]);
    if (v === undefined) continue;
    if (widerThan(key, v, user)) ignored.push({ key, layer, value: v, user });
    else if (widerThan(key, value, v)) value = v;
  }
  return { value, ignored };
}

export interface PolicyRead {
  sandbox: SandboxMode;
  approval: ApprovalPolicy;
  network: boolean;
  /** Workspace or folder values that would have widened the user's, not applied (for the log). */
  ignored: IgnoredWider[];
}

/** The three settings, each never wider than the user's own value (or the default). The same in Restricted Mode, where the host's ceiling applies on top. */
export function readPolicySettings(inspect: InspectPolicy): PolicyRead {
  const sandbox = narrowedPolicy('policy.sandbox', inspect);
  const approval = narrowedPolicy('policy.approval', inspect);
  const network = narrowedPolicy('policy.network', inspect);
  return {
    sandbox: sandbox.value,
    approval: approval.value,
    network: network.value,
    ignored: [...sandbox.ignored, ...approval.ignored, ...network.ignored],
  };
}

/** What the log says about an ignored value: what, where, why, and how to widen (POLICY_WIDER_IGNORED). */
export function describeIgnored(i: IgnoredWider): string {
  return (
    `arbor.${i.key} is ${JSON.stringify(i.value)} in ${NARROWING_LAYERS[i.layer]}, wider than your own ${JSON.stringify(i.user)}: it is ignored, ` +
    `because a workspace's settings (a cloned repository's) can only narrow Arbor's permissions. ` +
    `To widen them, set arbor.${i.key} in your user settings (POLICY_WIDER_IGNORED).`
  );
}

/** Says each distinct ignored value once per window: `fresh` returns the ones not said yet. */
export class SaidOnce {
  private readonly said = new Set<string>();
  fresh(lines: readonly string[]): string[] {
    return lines.filter((l) => !this.said.has(l) && this.said.add(l));
  }
}
