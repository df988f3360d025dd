import type { ApprovalDecision, ApprovalPort, ApprovalReply, ApprovalRequest } from '../policy/approval';

/**
 * Child approval policy `escalate`: a child's request goes to the host's port, tagged with
 * the child's id and lineage. It is answered or refused, never stuck: a host that does not
 * answer within `timeoutMs` is a denial.
 */
export function escalatingPort(host: ApprovalPort, lineage: string[], timeoutMs: number): ApprovalPort {
  return {
    async ask(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalDecision | ApprovalReply> {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<ApprovalDecision | ApprovalReply>((resolve) => {
        timer = setTimeout(() => resolve('deny'), timeoutMs);
      });
      try {
        // A descendant the child runs itself (an ACP agent's own sub-session) asks through it: it leads the lineage.
        const chain = request.sessionId === lineage[0] ? lineage : [request.sessionId, ...lineage];
        return await Promise.race([host.ask({ ...request, lineage: chain }, signal), timeout]);
      } catch {
        return 'deny';
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
