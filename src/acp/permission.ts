import { randomUUID } from 'node:crypto';
import type * as acp from '@agentclientprotocol/sdk/unstable';
import { methods } from '@agentclientprotocol/sdk/unstable';
import type { Harness } from '../core/harness';
import type { ApprovalDecision, ApprovalPort, ApprovalRequest } from '../core/policy/approval';
import type { SessionTable } from './sessions';
import { lineageOf } from './tree';
import { toolKind } from './updates';

/** The two answers offered. Never an "always" option: a grant is the human's to give in Arbor, not a client's default. */
const OPTIONS: acp.PermissionOption[] = [
  { optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' },
  { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' },
];

export interface PermissionDeps {
  table: Pick<SessionTable, 'get'>;
  /** The connection's client context (undefined once it has closed). */
  client():
    | {
        request(
          method: typeof methods.client.session.requestPermission,
          params: acp.RequestPermissionRequest,
          options?: { cancellationSignal?: AbortSignal; stopWaitingOnCancel?: boolean },
        ): Promise<acp.RequestPermissionResponse>;
      }
    | undefined;
  harnessOf(sessionId: string): Harness | undefined;
  /** A child waits on the human: its announced state changes (requires_action and back). */
  touch(sessionId: string): Promise<void>;
  /** How long the client may take before the request is denied. */
  timeoutMs: number;
}

/**
 * Approvals as `session/request_permission` to the client (decision 0037). A child's escalated
 * request goes to its root's ACP session, with the child's label in the title and its lineage
 * in `_meta.arbor`. Fails closed: no client, a cancelled turn, a `cancelled` outcome, anything
 * but `allow_once`, or no answer in time is a denial (`decideApproval` drops a late answer).
 */
export function acpApprovalPort(deps: PermissionDeps): ApprovalPort {
  return {
    async ask(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalDecision> {
      const client = deps.client();
      const h = deps.harnessOf(request.sessionId);
      if (!client || !h) return 'deny';
      const lineage = request.lineage ?? (await lineageOf(h, request.sessionId));
      const owner = lineage.map((id) => deps.table.get(id)).find((s) => s && s.parent === undefined);
      if (!owner) return 'deny';
      const child = owner.id !== request.sessionId;
      const label = child ? ((await h.store.summary(request.sessionId).catch(() => undefined))?.label ?? request.sessionId) : undefined;
      const params: acp.RequestPermissionRequest = {
        sessionId: owner.id,
        toolCall: {
          toolCallId: request.callId ?? `approval-${randomUUID()}`,
          title: label ? `[${label}] ${request.summary}` : request.summary,
          kind: toolKind(request.tool),
          status: 'pending',
          rawInput: { summary: request.summary, reason: request.reason },
          ...(request.preview ? { content: [{ type: 'content', content: { type: 'text', text: request.preview.text } }] } : {}),
        },
        options: OPTIONS,
        _meta: { arbor: { tool: request.tool, reason: request.reason, sessionId: request.sessionId, ...(child ? { label, lineage } : {}) } },
      };
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'deny'>((resolve) => {
        timer = setTimeout(() => resolve('deny'), deps.timeoutMs);
      });
      const cancel = new AbortController();
      const onAbort = () => cancel.abort();
      signal?.addEventListener('abort', onAbort, { once: true });
      if (child) await deps.touch(request.sessionId);
      let answered = false;
      try {
        const asked = client
          .request(methods.client.session.requestPermission, params, { cancellationSignal: cancel.signal, stopWaitingOnCancel: true })
          .then((r): ApprovalDecision => (r.outcome.outcome === 'selected' && r.outcome.optionId === 'allow_once' ? 'allow' : 'deny'))
          .catch((): ApprovalDecision => 'deny')
          .finally(() => (answered = true));
        return await Promise.race([asked, timeout]);
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        // A request still open (timed out) is withdrawn from the client.
        if (!answered) cancel.abort();
        if (child) void deps.touch(request.sessionId);
      }
    },
  };
}
