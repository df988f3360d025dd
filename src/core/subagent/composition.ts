import type { Agent } from '../agent/agent';
import type { Admission } from '../agent/config';
import type { SessionWriter } from '../agent/session-writer';
import type { ApprovalPort } from '../policy/approval';
import type { Persona } from '../scope/prompt';
import type { RemoteDriver } from './remote-driver';

/** How a child is assembled; everything here is refolded from the child's own log on cold resume. */
export interface ChildComposition {
  /** The parent's preset standing scope (never the parent's own scope). */
  preset?: string;
  /** The child's own scope key: child-local tools (report, structured output) live here. */
  ownScope: string;
  toolFilter?: string[];
  persona?: Persona;
  model?: string;
  maxTokens?: number;
  /** Replaces the deployment's approval port (the escalate wrapper). */
  approval?: ApprovalPort;
  /** Its slot under the harness-wide limit on children running at once. */
  admission?: Admission;
  /** The child's turns run in another program (its provider's driver), not the model loop. */
  remote?: RemoteDriver;
  /** Its only roots (a worktree child's worktree, or the one it inherited, decision 0060); absent: the deployment's. */
  roots?: readonly string[];
}

/** The composition root's port: build an Agent over a writer; `release` forgets it. */
export type AgentFactory = (writer: SessionWriter, comp: ChildComposition) => { agent: Agent; release(): void };

export const ownScopeOf = (childId: string): string => `agent:${childId}`;

/** Runtime context for the child: a message, not a system-prompt section, so the head stays the parent's. */
export function delegationNotice(opts: { parentId: string; depth: number; continuable: boolean; approvalRefused: boolean }): string {
  return [
    `[Arbor runtime] You are a subagent (depth ${opts.depth}) working for session ${opts.parentId}.`,
    'Your permissions were fixed when you were started; they cannot be widened.',
    opts.approvalRefused
      ? 'Actions that need approval will be refused: do not ask for them; say in your reply what you could not do and why.'
      : 'Actions that need approval go to the user, tagged with your id.',
    opts.continuable
      ? 'Your final message is delivered to your parent when you settle; use the report tool for progress your parent should see earlier.'
      : 'Your final message is your result: make it complete and self-contained.',
  ].join(' ');
}
