import type { ApprovalPolicy } from '../session/events';
import type { PolicyOverrides } from '../session/folds';
import type { Effective } from './sandbox';

/** A request for a human (or an approval service) to allow one action. */
export interface ApprovalRequest {
  sessionId: string;
  tool: string;
  /** One line a human can judge: the command, or the path and what will happen to it. */
  summary: string;
  reason: string;
  /** For a delegated child's request: the asking session first, then its ancestors up to the root. */
  lineage?: string[];
}

export type ApprovalDecision = 'allow' | 'deny';

/** Hosts implement this: the CLI (never | auto), the VS Code UI (a prompt), tests. */
export interface ApprovalPort {
  ask(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalDecision>;
}

export const APPROVAL_POLICIES: readonly ApprovalPolicy[] = ['ask', 'never'];

/** The approval policy a session runs under now: its last `approval/policy` event, else the deployment default. */
export function effectiveApproval(overrides: PolicyOverrides, deploymentDefault: ApprovalPolicy): ApprovalPolicy {
  return approvalWithSource(overrides, deploymentDefault).value;
}

export function approvalWithSource(overrides: PolicyOverrides, deploymentDefault: ApprovalPolicy): Effective<ApprovalPolicy> {
  const o = overrides.approval;
  return o ? { value: o.value, source: o.source, seq: o.seq } : { value: deploymentDefault, source: 'deployment' };
}

export function isApprovalPolicy(value: unknown): value is ApprovalPolicy {
  return typeof value === 'string' && (APPROVAL_POLICIES as readonly string[]).includes(value);
}

/** The slice of a tool context that approval needs (structurally a `ToolContext`). */
export interface ApprovalContext {
  sessionId: string;
  approvalPolicy: ApprovalPolicy;
  approval?: ApprovalPort;
  signal?: AbortSignal;
}

export type ApprovalOutcome =
  | 'allowed'
  /** Policy `never`: denied without asking anyone. */
  | 'policy-never'
  /** Policy `ask` but the host gave no port to ask. */
  | 'no-port'
  /** The port answered `deny`. */
  | 'denied'
  /** The turn was cancelled before (or while) asking. */
  | 'aborted'
  /** The port threw or answered something other than allow/deny; treated as a denial. */
  | 'port-failed';

export interface ApprovalAnswer {
  approved: boolean;
  outcome: ApprovalOutcome;
}

/**
 * Ask for approval under the context's policy. Fails closed: anything but an explicit
 * `allow` from the port, before the signal aborts, is a denial. Never throws.
 */
export async function decideApproval(
  ctx: ApprovalContext,
  request: Omit<ApprovalRequest, 'sessionId'> & { sessionId?: string },
): Promise<ApprovalAnswer> {
  const deny = (outcome: ApprovalOutcome): ApprovalAnswer => ({ approved: false, outcome });
  if (ctx.signal?.aborted) return deny('aborted');
  if (ctx.approvalPolicy !== 'ask') return deny('policy-never');
  const port = ctx.approval;
  if (!port) return deny('no-port');

  const full: ApprovalRequest = { ...request, sessionId: request.sessionId ?? ctx.sessionId };
  const signal = ctx.signal;
  let onAbort: (() => void) | undefined;
  // An abort settles the wait at once even if the port ignores its signal; the port's
  // late answer is then dropped (a decision for a cancelled turn authorises nothing).
  const aborted = new Promise<ApprovalAnswer>((resolve) => {
    if (!signal) return;
    onAbort = () => resolve(deny('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  const asked = (async (): Promise<ApprovalAnswer> => {
    try {
      const decision = await port.ask(full, signal);
      if (decision === 'allow') return { approved: true, outcome: 'allowed' };
      return deny(decision === 'deny' ? 'denied' : 'port-failed');
    } catch {
      return deny('port-failed');
    }
  })();
  try {
    const answer = await Promise.race([asked, aborted]);
    // An allow that raced an abort still loses: the turn is over.
    return answer.approved && signal?.aborted ? deny('aborted') : answer;
  } finally {
    if (signal && onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/** `decideApproval` reduced to yes/no. */
export async function requestApproval(
  ctx: ApprovalContext,
  request: Omit<ApprovalRequest, 'sessionId'> & { sessionId?: string },
): Promise<boolean> {
  return (await decideApproval(ctx, request)).approved;
}

/** A sentence for the model explaining a denial, so it stops retrying and tells the user. */
export function describeDenial(outcome: ApprovalOutcome): string {
  switch (outcome) {
    case 'policy-never':
      return 'approval was refused: the approval policy is "never", so actions that need approval are denied';
    case 'no-port':
      return 'approval was refused: no one is available to approve it in this session';
    case 'denied':
      return 'approval was refused by the user';
    case 'aborted':
      return 'approval was refused: the turn was cancelled while waiting';
    case 'port-failed':
      return 'approval was refused: the approval service failed to answer';
    case 'allowed':
      return 'approved';
  }
}

/** Denies everything without prompting (CLI `--approval never`). */
export const neverApprove: ApprovalPort = {
  ask: async () => 'deny',
};

/** Allows everything without prompting (CLI `--approval auto`): the user accepted the risk up front. */
export const autoApprove: ApprovalPort = {
  ask: async () => 'allow',
};

export type ApprovalScript =
  | readonly ApprovalDecision[]
  | ((request: ApprovalRequest, signal?: AbortSignal) => ApprovalDecision | Promise<ApprovalDecision>);

export interface ScriptedApproval extends ApprovalPort {
  /** Every request asked, in order. */
  readonly requests: ApprovalRequest[];
}

/**
 * A port that answers from a script (tests, replays): a list consumed in order (then
 * `fallback`, default deny), or a function. Records what it was asked.
 */
export function scriptedApproval(script: ApprovalScript, fallback: ApprovalDecision = 'deny'): ScriptedApproval {
  const requests: ApprovalRequest[] = [];
  let next = 0;
  return {
    requests,
    async ask(request, signal) {
      requests.push(request);
      if (typeof script === 'function') return script(request, signal);
      return next < script.length ? script[next++] : fallback;
    },
  };
}

/** The port for a CLI `--approval` flag value. */
export function approvalPortForFlag(flag: 'never' | 'auto'): ApprovalPort {
  return flag === 'auto' ? autoApprove : neverApprove;
}
