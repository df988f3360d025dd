import type { Agent } from '../agent/agent';
import { SessionWriter } from '../agent/session-writer';
import { describeError } from '../errors';
import type { SessionEvent, SessionHeader, SubagentDescriptorEvent, WorktreeEvent } from '../session/events';
import type { Store } from '../store/store';
import type { AgentFactory, ChildComposition } from './composition';
import { filesOfWorktree } from './isolation';
import { personaOf } from './policy-snapshot';
import { SubagentError, type SubagentRequest } from './types';

// A released continuable child rebuilt from its own log: its descriptor (the suffix of its
// seed) gives the composition again, never wider than it was; residency makes it resident.

/** What a cold resume needs of the runtime. */
export interface ResumePort {
  store: Store;
  build: AgentFactory;
  /** Read at each resume: a settings change reaches the next one. */
  childApproval: () => 'never' | 'escalate';
  composition(
    header: SessionHeader,
    request: Pick<SubagentRequest, 'toolFilter' | 'persona' | 'model' | 'maxTokens'> & { provider?: string },
    escalate: boolean,
    roots?: readonly string[],
  ): ChildComposition;
  registerLocalTools(childId: string, mode: 'continuable', request: Pick<SubagentRequest, 'outputSchema'>): () => void;
  /** Writes a stored worktree child's files when it was made without them (the worktree service's `fill`); absent: as is. */
  fillWorktree?: (dir: string) => Promise<void>;
}

export interface Rebuilt {
  agent: Agent;
  parentId: string;
  /** Releases the agent and its local tools. */
  release: () => void;
}

/**
 * Rebuild a child from its own log: parent verified by the caller, descriptor from its suffix.
 * `setDepth` hears the child's delegation depth once its log is read, before anything is built.
 * The caller holds the log's gate (inbound.ts `resumeOnce`, decision 0129): nothing else writes
 * the log between its read here and the agent built over it being resident.
 */
export async function rebuildFromLog(rt: ResumePort, childId: string, setDepth: (depth: number) => void): Promise<Rebuilt> {
  const { store } = rt;
  let session: Awaited<ReturnType<typeof store.inspect>>;
  try {
    session = await store.inspect(childId);
  } catch (err) {
    throw new SubagentError('DESCRIPTOR', `The log of ${childId} cannot be read (${describeError(err)}); it cannot be resumed.`);
  }
  const { descriptor: d, worktree, approval } = resumeFacts(session.header, session.events);
  if (!d) throw new SubagentError('DESCRIPTOR', `${childId} has no subagent descriptor after its seed; its log is damaged or it is not a subagent.`);
  if (d.mode !== 'continuable') throw new SubagentError('NOT_CONTINUABLE', `${childId} is a one-shot subagent: it takes no follow-ups.`);
  setDepth(session.header.delegationDepth ?? 0);
  const escalate = rt.childApproval() === 'escalate' && approval === 'ask';
  const persona = personaOf(session.header, d);
  const comp = rt.composition(
    session.header,
    {
      ...(d.toolFilter ? { toolFilter: d.toolFilter } : {}),
      // Its descriptor's role, else (a fork) the one it took from its source, kept in its header.
      ...(persona ? { persona } : {}),
      ...(d.model ? { model: d.model } : {}),
      // A remote child (a placed one takes follow-ups) runs its provider's driver again.
      provider: d.provider,
    },
    escalate,
    // A worktree child (or a descendant of one) is rooted in that worktree again, whatever became of it: never wider (decision 0060).
    worktree ? [worktree.root] : undefined,
  );
  // Arbor's own agent here (not a provider's driver: a placement no longer configured) works in the files themselves.
  if (!comp.remote) await filesOfWorktree(worktree, rt.fillWorktree);
  const unregister = rt.registerLocalTools(childId, 'continuable', {});
  const built = rt.build(new SessionWriter(session, store), comp);
  await built.agent.recover();
  return {
    agent: built.agent,
    parentId: session.header.parentSession!,
    release: () => {
      built.release();
      unregister();
    },
  };
}

/**
 * What a resume reads of the child's log, in one pass from its end: its own descriptor and
 * worktree fact (the last after its seed: `descriptorOf`, `worktreeOf`) and its last approval
 * switch (anywhere). A 10k-event log took a pass for each (~0.5 ms apiece on a quiet machine).
 */
export function resumeFacts(
  header: SessionHeader,
  events: readonly SessionEvent[],
): { descriptor?: SubagentDescriptorEvent; worktree?: WorktreeEvent; approval?: string } {
  const from = header.seedLength ?? 0;
  let descriptor: SubagentDescriptorEvent | undefined;
  let worktree: WorktreeEvent | undefined;
  let approval: string | undefined;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e.type === 'approval/policy') approval ??= e.policy;
    else if (i < from) continue;
    else if (e.type === 'subagent/descriptor') descriptor ??= e;
    else if (e.type === 'worktree') worktree ??= e;
  }
  return { ...(descriptor ? { descriptor } : {}), ...(worktree ? { worktree } : {}), ...(approval !== undefined ? { approval } : {}) };
}
