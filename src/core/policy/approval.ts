import type { ApprovalPolicy, SandboxMode } from '../session/events';
import type { PolicyOverrides } from '../session/folds';
import { type ApprovalTarget, type GrantBook, type GrantScope, offeredScope, whyNoGrant } from './grants';
import { beyondCeiling, type Effective, type PolicyCeiling } from './sandbox';

/** A request for a human (or an approval service) to allow one action. */
export interface ApprovalRequest {
  sessionId: string;
  tool: string;
  /** One line a human can judge: the command, or the path and what will happen to it. */
  summary: string;
  reason: string;
  /** For a delegated child's request: the asking session first, then its ancestors up to the root. */
  lineage?: string[];
  /** What a grant could cover (the command, or the real path); lets a grant skip the ask. */
  target?: ApprovalTarget;
  /** What "allow for this conversation" would record; absent when it is not offered. */
  grant?: GrantScope;
  /** Why "allow for this conversation" is not offered (a compound command, an agent that asks call by call), for the card. */
  noGrant?: string;
  /** What will happen, for the human to read: a unified diff against the current file, or the new content. */
  preview?: { kind: 'diff' | 'content'; text: string };
  /** The model's tool call that asks (from the tool context), so a host can tie the ask to the call it shows. */
  callId?: string;
  /** False when a denial's reason reaches nobody (an ACP agent is told only `reject_once`): a host does not ask for one. */
  reasonHeard?: false;
}

export type ApprovalDecision = 'allow' | 'deny';

/** A richer answer: allow and remember (a grant), or deny with a reason the model reads. */
export interface ApprovalReply {
  decision: ApprovalDecision;
  /** With `allow`: record the request's offered `grant` for this conversation. */
  remember?: boolean;
  /** With `deny`: the user's words, passed to the model in the tool result. */
  reason?: string;
}

/** Hosts implement this: the CLI (never | auto), the VS Code UI (a prompt), tests. */
export interface ApprovalPort {
  ask(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalDecision | ApprovalReply>;
}

/** The approval policy a session runs under now: its last `approval/policy` event, else the deployment default; `never` under a ceiling of `never`. */
export function effectiveApproval(overrides: PolicyOverrides, deploymentDefault: ApprovalPolicy, ceiling?: PolicyCeiling): ApprovalPolicy {
  return approvalWithSource(overrides, deploymentDefault, ceiling).value;
}

export function approvalWithSource(overrides: PolicyOverrides, deploymentDefault: ApprovalPolicy, ceiling?: PolicyCeiling): Effective<ApprovalPolicy> {
  if (ceiling?.approval === 'never') return { value: 'never', source: 'deployment' };
  const o = overrides.approval;
  return o ? { value: o.value, source: o.source, seq: o.seq } : { value: deploymentDefault, source: 'deployment' };
}

/** The slice of a tool context that approval needs (structurally a `ToolContext`). */
export interface ApprovalContext {
  sessionId: string;
  approvalPolicy: ApprovalPolicy;
  approval?: ApprovalPort;
  signal?: AbortSignal;
  /** The session's grants ("allow for this conversation"); without it nothing is remembered. */
  grants?: GrantBook;
  /** The sandbox mode now (a grant does not hold in a narrower mode than it was given in). */
  sandbox?: SandboxMode;
  /** The tool call being run (a `ToolContext` carries it): passed on in the request. */
  callId?: string;
  /** The deployment's ceiling (an explicit CLI `--sandbox`, Restricted Mode): what runs outside its sandbox is not asked about. */
  ceiling?: PolicyCeiling;
}

export type ApprovalOutcome =
  | 'allowed'
  /** A grant of this conversation covered it: allowed without asking. */
  | 'granted'
  /** Policy `never`: denied without asking anyone. */
  | 'policy-never'
  /** Policy `ask` but the host gave no port to ask. */
  | 'no-port'
  /** The port answered `deny`. */
  | 'denied'
  /** The turn was cancelled before (or while) asking. */
  | 'aborted'
  /** The port threw or answered something other than allow/deny; treated as a denial. */
  | 'port-failed'
  /** The action would run outside the ceiling's sandbox: denied before any grant or port (decision 0125). */
  | 'ceiling';

export interface ApprovalAnswer {
  approved: boolean;
  outcome: ApprovalOutcome;
  /** The user's reason for a denial, when they gave one. */
  reason?: string;
}

const MAX_REASON = 2000;

function normalise(reply: unknown): ApprovalReply | undefined {
  if (reply === 'allow' || reply === 'deny') return { decision: reply };
  if (typeof reply !== 'object' || reply === null) return undefined;
  const r = reply as Record<string, unknown>;
  if (r.decision !== 'allow' && r.decision !== 'deny') return undefined;
  const reason = typeof r.reason === 'string' && r.reason.trim() !== '' ? r.reason.trim().slice(0, MAX_REASON) : undefined;
  return { decision: r.decision, ...(r.remember === true ? { remember: true } : {}), ...(reason ? { reason } : {}) };
}

/** What a tool asks `decideApproval`: the port's request, plus what only the decider reads. */
export type ApprovalAsk = Omit<ApprovalRequest, 'sessionId'> & {
  sessionId?: string;
  /** The action runs outside the OS sandbox (an unconfined command): refused without asking under a ceiling narrower than full-access (decision 0125). */
  unconfined?: true;
};

/**
 * Ask for approval under the context's policy. Fails closed: anything but an explicit
 * `allow` from the port, before the signal aborts, is a denial. Never throws.
 */
export async function decideApproval(ctx: ApprovalContext, asking: ApprovalAsk): Promise<ApprovalAnswer> {
  const { unconfined, ...request } = asking;
  const deny = (outcome: ApprovalOutcome): ApprovalAnswer => ({ approved: false, outcome });
  if (ctx.signal?.aborted) return deny('aborted');
  // A ceiling is the widest anything runs under: no port's allow (`--approval auto`, a grant) lifts it.
  const capped = unconfined ? beyondCeiling(ctx.ceiling) : undefined;
  if (capped) return { approved: false, outcome: 'ceiling', reason: capped };
  if (ctx.approvalPolicy !== 'ask') return deny('policy-never');
  // A grant skips only the ask: the policy above still says no when it is 'never'.
  const sandbox = ctx.sandbox ?? 'read-only';
  if (request.target && ctx.grants?.find(request.tool, request.target, sandbox)) return { approved: true, outcome: 'granted' };
  const port = ctx.approval;
  if (!port) return deny('no-port');

  const offered = request.target && ctx.grants ? offeredScope(request.target) : undefined;
  const noGrant = request.target && ctx.grants && !offered ? whyNoGrant(request.target) : undefined;
  const full: ApprovalRequest = {
    ...request,
    sessionId: request.sessionId ?? ctx.sessionId,
    ...(offered ? { grant: offered } : {}),
    ...(noGrant ? { noGrant } : {}),
    ...(ctx.callId && !request.callId ? { callId: ctx.callId } : {}),
  };
  const signal = ctx.signal;
  let onAbort: (() => void) | undefined;
  // An abort settles the wait at once even if the port ignores its signal; the port's
  // late answer is then dropped (a decision for a cancelled turn authorises nothing).
  const aborted = new Promise<ApprovalAnswer>((resolve) => {
    if (!signal) return;
    onAbort = () => resolve(deny('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  type Asked = ApprovalAnswer & { remember?: GrantScope };
  const asked = (async (): Promise<Asked> => {
    try {
      const reply = normalise(await port.ask(full, signal));
      if (!reply) return deny('port-failed');
      if (reply.decision === 'deny') return { approved: false, outcome: 'denied', ...(reply.reason ? { reason: reply.reason } : {}) };
      return { approved: true, outcome: 'allowed', ...(reply.remember && offered ? { remember: offered } : {}) };
    } catch {
      return deny('port-failed');
    }
  })();
  try {
    const answer: Asked = await Promise.race([asked, aborted]);
    // An allow that raced an abort still loses: the turn is over.
    if (answer.approved && signal?.aborted) return deny('aborted');
    const remember = answer.remember;
    if (remember && ctx.grants) {
      // The decision stands even if recording fails: it was allowed once, only not remembered.
      await ctx.grants.record(request.tool, remember, sandbox).catch(() => undefined);
    }
    return { approved: answer.approved, outcome: answer.outcome, ...(answer.reason ? { reason: answer.reason } : {}) };
  } finally {
    if (signal && onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/** A sentence for the model explaining a denial, so it stops retrying and tells the user; the user's reason is quoted. */
export function describeDenial(outcome: ApprovalOutcome, reason?: string): string {
  if (outcome === 'denied' && reason) return `approval was refused by the user, who said: "${reason}"`;
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
    case 'ceiling':
      return `refused without asking (POLICY_CEILING): ${reason ?? 'it would run outside the sandbox the deployment caps sessions at'}`;
    case 'allowed':
    case 'granted':
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
