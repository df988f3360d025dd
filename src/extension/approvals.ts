import { randomUUID } from 'node:crypto';
import type { ApprovalReply, ApprovalRequest } from '../core/policy/approval';
import type { ApprovalGrant } from '../core/policy/grants';
import type { ApprovalPrompt, GrantView, TreeNode } from '../protocol';
import { scopeView } from './shown-paths';

export interface DeskEvents {
  /** A request is waiting: views show it, the host badges and notifies. */
  opened(prompt: ApprovalPrompt): void;
  /** It was answered (by a view, a notification, or a cancelled turn). */
  closed(prompt: ApprovalPrompt, reply: ApprovalReply): void;
}

/**
 * The pending approvals of every session: one human, many askers. The first answer wins
 * (panel, transcript tab or notification); a cancelled turn's request closes as a denial.
 */
export class ApprovalDesk {
  private readonly pending = new Map<string, { prompt: ApprovalPrompt; resolve(r: ApprovalReply): void }>();

  constructor(private readonly events: DeskEvents) {}

  ask(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalReply> {
    const requestId = randomUUID();
    const prompt: ApprovalPrompt = {
      requestId,
      sessionId: request.sessionId,
      lineage: request.lineage ?? [request.sessionId],
      tool: request.tool,
      summary: request.summary,
      reason: request.reason,
      ...(request.grant ? { grant: request.grant } : {}),
      ...(request.noGrant ? { noGrant: request.noGrant } : {}),
      ...(request.preview ? { preview: request.preview } : {}),
      ...(request.reasonHeard === false ? { reasonHeard: false as const } : {}),
    };
    return new Promise<ApprovalReply>((resolve) => {
      const onAbort = () => done({ decision: 'deny' });
      const done = (reply: ApprovalReply) => {
        if (!this.pending.delete(requestId)) return;
        signal?.removeEventListener('abort', onAbort);
        this.events.closed(prompt, reply);
        resolve(reply);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(requestId, { prompt, resolve: done });
      this.events.opened(prompt);
    });
  }

  /** Answer a pending request; false when it is already answered (another view was first). */
  answer(requestId: string, reply: ApprovalReply): boolean {
    const a = this.pending.get(requestId);
    if (!a) return false;
    // "Remember" means nothing for a request that offered no grant; keep the reply honest.
    a.resolve({
      decision: reply.decision,
      ...(reply.decision === 'allow' && reply.remember && a.prompt.grant ? { remember: true } : {}),
      ...(reply.decision === 'deny' && reply.reason?.trim() ? { reason: reply.reason.trim() } : {}),
    });
    return true;
  }

  prompts(): ApprovalPrompt[] {
    return [...this.pending.values()].map((a) => a.prompt);
  }

  get size(): number {
    return this.pending.size;
  }

  /** The node with its "needs you" count (approvals waiting in it or below it), when it has one. */
  mark(node: TreeNode, parentOf: (id: string) => string | undefined): TreeNode {
    if (this.pending.size === 0) return node;
    const n = this.countAt(node.id, parentOf);
    return n > 0 ? { ...node, pendingApprovals: n } : node;
  }

  /** An approval asked by `id` itself is waiting (its turn is blocked on a human). */
  waitingIn(id: string): boolean {
    for (const { prompt } of this.pending.values()) if (prompt.sessionId === id) return true;
    return false;
  }

  /** Approvals waiting in `id` itself or in a session below it. */
  countAt(id: string, parentOf: (id: string) => string | undefined): number {
    let n = 0;
    for (const { prompt } of this.pending.values()) if (this.marked(prompt, parentOf).includes(id)) n++;
    return n;
  }

  /** Every session that shows a mark for a pending request: the asker, its lineage and its ancestors in the tree. */
  marked(prompt: ApprovalPrompt, parentOf: (id: string) => string | undefined): string[] {
    const out = new Set<string>(prompt.lineage);
    const visited = new Set<string>();
    for (let cur: string | undefined = prompt.sessionId; cur && !visited.has(cur); cur = parentOf(cur)) {
      visited.add(cur);
      out.add(cur);
    }
    return [...out];
  }

  denyAll(): void {
    for (const a of [...this.pending.values()]) a.resolve({ decision: 'deny' });
  }
}

/** A grant as the views list it (a path relative to the workspace `roots`). */
export function grantView(g: ApprovalGrant, roots: readonly string[] = []): GrantView {
  return { grantId: g.grantId, tool: g.tool, scope: scopeView(g.scope, roots), at: g.at };
}
