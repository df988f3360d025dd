import * as vscode from 'vscode';
import { checkPriceOverrides, type ModelPrice } from '../core/cost/prices';
import { CAP_FIELD_SETTINGS, type CapFieldSetting } from '../core/model/cap-field';
import { DEFAULT_BASE_URL, DEFAULT_MODEL } from '../core/model/endpoint';
import type { WorkflowDeployment } from '../core/workflow/limits';
import type { ApprovalPolicy, ExamplePrompt, SandboxMode } from '../protocol';
import { readExamplePrompts } from './example-prompts';
import { type PlacementsSettingRead, readPlacementSettings } from './placement-settings';
import { describeIgnored, type PolicyKey, readPolicySettings } from './policy-settings';
import { type RemoteRead, readRemoteSettings } from './remote-settings';

/** Arbor's settings as typed values (package.json `contributes.configuration`). */
export interface ArborSettings {
  baseUrl: string;
  model: string;
  maxTokens?: number;
  /** Which request field carries the reply cap (`arbor.model.completionCapField`). */
  capField: CapFieldSetting;
  /** How long the model may take to start answering, and to send its next chunk. */
  timeoutMs: number;
  maxDepth: number;
  sandbox: SandboxMode;
  approval: ApprovalPolicy;
  childApproval: 'never' | 'escalate';
  releaseDelayMs: number;
  /** Subagents running at once, harness-wide (the rest queue). */
  maxConcurrent: number;
  /** Sandboxed commands may use the network. */
  network: boolean;
  /** Workspace values of `arbor.policy.*` wider than the user's, ignored (decision 0125, amended), for the log. */
  policyIgnored: string[];
  /** Offered as buttons by an empty panel. */
  examplePrompts: ExamplePrompt[];
  /** A goal's round limit when none is given. */
  goalMaxRounds: number;
  /** `arbor.hooks.readClaudeSettings`: hooks from `.claude/settings.json` too. */
  hooksReadClaude: boolean;
  /** `arbor.checkpoints.enabled`: record checkpoints for Rewind… (decision 0059). */
  checkpoints: boolean;
  /** Workflow limits (`arbor.workflow.*`), read at each run's start. */
  workflow: WorkflowSettings;
  /** Price overrides (`arbor.prices`) over the defaults; a bad table is reported and ignored. */
  prices: Record<string, ModelPrice | null>;
  /** Why `arbor.prices` was ignored, if it was. */
  pricesError?: string;
}

export type WorkflowSettings = Pick<WorkflowDeployment, 'maxTotalAgents' | 'concurrency' | 'maxConcurrency' | 'wallClockMs' | 'allowUnconfined'>;

/** A positive whole number from a setting, or `fallback` when it is not one (a hand-edited settings.json). */
const count = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isFinite(v) && v >= 1 ? Math.floor(v) : fallback);

function readWorkflow(c: vscode.WorkspaceConfiguration): WorkflowSettings {
  const maxConcurrency = count(c.get('workflow.maxConcurrency'), 16);
  const minutes = c.get<unknown>('workflow.wallClockMinutes');
  return {
    maxTotalAgents: count(c.get('workflow.maxTotalAgents'), 1000),
    // The ceiling wins: a default above it would be cut at every run anyway.
    concurrency: Math.min(count(c.get('workflow.concurrency'), 4), maxConcurrency),
    maxConcurrency,
    wallClockMs: Math.round((typeof minutes === 'number' && Number.isFinite(minutes) && minutes > 0 ? minutes : 30) * 60_000),
    // Machine-scoped and read from the user's own settings only: a workspace cannot unconfine its scripts.
    allowUnconfined: c.inspect<boolean>('workflow.allowUnconfinedScripts')?.globalValue === true,
  };
}

/** A hand-edited settings.json may hold anything: an unknown value is `auto`. */
const capFieldSetting = (v: unknown): CapFieldSetting => (CAP_FIELD_SETTINGS.includes(v as CapFieldSetting) ? (v as CapFieldSetting) : 'auto');

export function readSettings(): ArborSettings {
  const c = vscode.workspace.getConfiguration('arbor');
  // An untrusted workspace must not redirect requests (and the API key) to its own server.
  const baseUrl = vscode.workspace.isTrusted
    ? c.get<string>('model.baseUrl', DEFAULT_BASE_URL)
    : (c.inspect<string>('model.baseUrl')?.globalValue ?? DEFAULT_BASE_URL);
  const maxTokens = c.get<number>('model.maxTokens', 0);
  // Sandbox, approval, network: a workspace's value only narrows the user's (decision 0125, amended),
  // trusted or not; Restricted Mode's ceiling applies on top (host.ts).
  const policy = readPolicySettings((key: PolicyKey) => c.inspect(key));
  return {
    baseUrl,
    model: c.get<string>('model.name', DEFAULT_MODEL),
    ...(maxTokens > 0 ? { maxTokens } : {}),
    capField: capFieldSetting(c.get<unknown>('model.completionCapField')),
    timeoutMs: Math.max(1, c.get<number>('model.timeoutSeconds', 120)) * 1000,
    maxDepth: c.get<number>('subagents.maxDepth', 5),
    sandbox: policy.sandbox,
    approval: policy.approval,
    childApproval: c.get<'never' | 'escalate'>('subagents.childApproval', 'never'),
    releaseDelayMs: c.get<number>('subagents.releaseDelayMs', 1000),
    maxConcurrent: Math.max(1, Math.floor(c.get<number>('subagents.maxConcurrent', 8)) || 8),
    network: policy.network,
    policyIgnored: policy.ignored.map(describeIgnored),
    goalMaxRounds: c.get<number>('goal.defaultMaxRounds', 10),
    hooksReadClaude: c.get<boolean>('hooks.readClaudeSettings', false),
    checkpoints: c.get<boolean>('checkpoints.enabled', true),
    workflow: readWorkflow(c),
    examplePrompts: readExamplePrompts(c.get<unknown>('chat.examplePrompts', [])),
    ...readPrices(c.get<unknown>('prices', {})),
  };
}

/** `arbor.prices`, checked: a bad table is ignored (defaults apply) and the reason kept for the log. */
function readPrices(v: unknown): { prices: Record<string, ModelPrice | null>; pricesError?: string } {
  try {
    return { prices: checkPriceOverrides(v ?? {}, 'arbor.prices') };
  } catch (err) {
    return { prices: {}, pricesError: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * The remote programs (`arbor.remote.*`, machine-scoped): the user's own values only, and
 * none in Restricted Mode. Read when the harness opens; a change applies at the next open.
 */
export function readRemote(): RemoteRead {
  const c = vscode.workspace.getConfiguration('arbor');
  return readRemoteSettings((key) => c.inspect(key), vscode.workspace.isTrusted);
}

/** The placements (`arbor.placements`, machine-scoped): the user's own values only, none in Restricted Mode; read when the harness opens. */
export function readPlacementsSetting(): PlacementsSettingRead {
  const c = vscode.workspace.getConfiguration('arbor');
  return readPlacementSettings((key) => c.inspect(key), vscode.workspace.isTrusted);
}

export { isLocalUrl } from '../core/model/endpoint';
