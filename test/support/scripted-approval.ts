import type { ApprovalDecision, ApprovalPort, ApprovalReply, ApprovalRequest } from '../../src/core/policy/approval';

// A test's approval port: the real ApprovalPort contract, answered from a script.

export type ApprovalScript =
  | readonly (ApprovalDecision | ApprovalReply)[]
  | ((request: ApprovalRequest, signal?: AbortSignal) => ApprovalDecision | ApprovalReply | Promise<ApprovalDecision | ApprovalReply>);

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
