import { randomUUID } from 'node:crypto';
import type { Agent } from '../agent/agent';
import { SessionWriter } from '../agent/session-writer';
import { descriptorOf } from '../session/folds';
import { headerFrom } from '../session/fork';
import { Session } from '../session/session';
import { narrowest, resolveAgentRequest } from './agent-request';
import { checkStart } from './checks';
import { type ComposeContext, childComposition, registerLocalTools } from './child-compose';
import type { ChildIds } from './child-ids';
import { delegationNotice } from './composition';
import type { StartGate } from './gates';
import { checkIsolation, isolationOf } from './isolation';
import { placedProviderName } from './placed';
import { capturePersona, capturePolicy, captureToolCeiling, narrowFilter } from './policy-snapshot';
import type { Residency } from './residency';
import type { Mode } from './runtime-deps';
import { vetoCheck } from './start-veto';
import { SubagentError, type SubagentRequest } from './types';

/** What creating a child reads of its runtime besides what composing one does. */
export interface CreateContext extends ComposeContext {
  /** Child ids: lineage + six hex digits, never one already taken (`child-ids.ts`). */
  readonly childIds: ChildIds;
  readonly residency: Pick<Residency, 'depthOf' | 'setDepth'>;
}

/** A published child: its agent, the first inbox message, and how to forget its agent and local tools. */
export interface CreatedChild {
  childId: string;
  messageId: string;
  agent: Agent;
  release: () => void;
}

/**
 * Build and publish a child. Checks run first, and the parent's policy is captured
 * before the first await; the session is published (header, seed, setup, first inbox
 * message) in one durable write, so a failure before that leaves nothing behind.
 */
export async function createChild(
  ctx: CreateContext,
  caller: Agent,
  providerName: string,
  asked: SubagentRequest,
  mode: Mode,
  signal: AbortSignal | undefined,
  onOutput?: (v: unknown) => void,
  gate?: StartGate,
): Promise<CreatedChild> {
  const { deps } = ctx;
  if (deps.resident(caller.id) !== caller || caller.isDisposed)
    throw new SubagentError('STALE_HANDLE', `Agent ${caller.id} is no longer live; it cannot start subagents.`);
  const parent = caller.session;
  const snapshot = capturePolicy(parent); // synchronous: before any await
  const ceiling = captureToolCeiling(parent);
  const parentDepth = Math.max(parent.header.delegationDepth ?? 0, ctx.residency.depthOf(parent.id));
  // A placement (the request's, else its agent file's) names the provider the child runs on (decision 0074).
  const placement = asked.placement ?? (asked.agent !== undefined ? deps.agents?.agent(asked.agent)?.placement : undefined);
  const runsOn = placedProviderName(ctx.providers, providerName, placement);
  const { provider, depth } = checkStart(ctx.providers, runsOn, asked, parentDepth, deps.maxDepth(), mode);
  // A placed child always works in its own worktree: where its collected changes land for review.
  if (provider.placement) asked = { ...asked, isolation: 'worktree' };
  // An agent file is read now, synchronously with the snapshot: its tools never exceed the caller's.
  if (asked.agent !== undefined) asked = resolveAgentRequest(asked, deps.agents, caller.toolNames());
  // A fork is the same agent: its caller's role unless it asks for one (its head is the caller's, for the prompt cache).
  const sameRole = provider.inheritsParentContext && asked.persona === undefined ? capturePersona(parent) : undefined;
  if (!provider.capabilities.toolFilter) checkUnfiltered(provider, ceiling, asked.toolFilter, caller.toolNames());
  // A requested sandbox only narrows: it is pinned when narrower than the caller's own (its
  // override, else the deployment's; unknown counts as read-only), else the child inherits as any does.
  const callerSandbox = snapshot.sandbox ?? deps.defaultSandbox?.() ?? 'read-only';
  const pinned = asked.sandbox && narrowest(asked.sandbox, callerSandbox) !== callerSandbox ? asked.sandbox : snapshot.sandbox;
  const childSandbox = checkIsolation(asked.isolation, provider, !!deps.worktrees, pinned, callerSandbox);
  const callerRoots = caller.roots;
  // An in-process child runs on its parent's model (and the deployment's client) unless the
  // request names one: recorded in its descriptor, so a cold resume and its own forks (whose
  // request head must equal its own, model included, for the prefix cache) keep it. A remote
  // child runs what its program is told (its setting), or the program's own default — then
  // the descriptor gets the model once the program says which (seed 000 §六, decision 0052).
  const model = asked.model ?? (provider.remote ? provider.remote.model?.() : caller.modelName);
  const modelProvider = provider.remote ? (provider.remote.modelProvider ?? provider.remote.program) : caller.modelProvider;
  const toolFilter = provider.capabilities.toolFilter ? narrowFilter(asked.toolFilter, ceiling) : asked.toolFilter;
  const request: SubagentRequest = { ...asked, ...(model ? { model } : {}), ...(toolFilter ? { toolFilter } : {}) };
  if (request.budget) deps.checkChildBudget?.(parent.id, request.budget);
  // No await unless a check applies: without hooks the start runs exactly as before.
  const veto = vetoCheck(deps, { parentId: parent.id, depth, provider: provider.name, mode, label: request.label, prompt: request.prompt, signal });
  if (veto) await veto;
  // Stopped while the hook judged (it was killed): nothing more is made for it, no worktree either.
  if (signal?.aborted) throw new SubagentError('CANCELLED', 'The delegating turn was interrupted before the subagent was created; nothing was started.');
  // Reachable, at this Arbor's version: where it runs and the round trip go in its descriptor.
  const placed = provider.placement ? await provider.placement.check(signal) : undefined;
  const { seed } = provider.prepare(parent);

  const childId = ctx.childIds.draw(parent.id);
  const header = headerFrom(parent.header, {
    id: childId,
    origin: seed ? 'fork' : 'subagent',
    parentSession: parent.id,
    delegationDepth: depth,
    title: request.label,
  });
  // The role it took is kept in its header (as a root's agent is), not its descriptor (which holds what was asked).
  if (seed && sameRole)
    header.agent = { ...(header.agent ?? { name: parentName(parent) }), persona: sameRole.text, ...(sameRole.complete ? { personaComplete: true } : {}) };
  const session = seed ? Session.fromSeed(header, seed) : Session.create(header);
  const writer = new SessionWriter(session, deps.store, { published: false });
  // Its own worktree (made now, outside any sandbox), or the one its caller works in: never wider.
  // The caller's summary says whether it works in a worktree: its log is read only then.
  const callerWorks = deps.store.summaryRef(parent.id)?.worktree !== undefined;
  const isolation = await isolationOf({
    caller: callerWorks ? parent : undefined,
    callerRoots,
    childId,
    label: request.label,
    isolated: request.isolation === 'worktree',
    filesLater: !!provider.placement,
    worktrees: deps.worktrees,
  });
  // (Setup appends go to the unpublished writer's memory: nothing is on disk until `publish`.)
  // Unpublished setup, after any seed: these are the child's own (live) facts.
  // Approval never widens: a parent that may not ask has children that may not either.
  const parentMayAsk = (snapshot.approval ?? deps.defaultApproval()) === 'ask';
  const escalate = deps.childApproval() === 'escalate' && deps.approvalPort !== undefined && parentMayAsk;
  if (childSandbox) await writer.append({ type: 'sandbox/mode', mode: childSandbox, source: 'delegation' });
  const approval = escalate ? 'ask' : deps.approvalPort ? 'never' : snapshot.approval;
  if (approval) await writer.append({ type: 'approval/policy', policy: approval, source: 'delegation' });
  await writer.append({
    type: 'subagent/descriptor',
    version: 2,
    mode,
    provider: provider.name,
    ...(request.label ? { label: request.label } : {}),
    modelProvider,
    ...(request.model ? { model: request.model } : {}),
    ...(request.persona ? { persona: request.persona.text, ...(request.persona.complete ? { personaComplete: true } : {}) } : {}),
    ...(request.toolFilter ? { toolFilter: [...request.toolFilter] } : {}),
    ...(request.agent ? { agent: request.agent } : {}),
    ...(request.workflow ? { workflow: { ...request.workflow } } : {}),
    ...(request.isolation ? { isolation: request.isolation } : {}),
    ...(placed ? { placement: { ...placed } } : {}),
  });
  if (isolation.event) await writer.append(isolation.event);
  // The child's budget is its own fact, after any seed: a fork's seed never hands one on.
  if (request.budget) await writer.append({ type: 'budget/set', budget: { ...request.budget }, source: 'delegation' });
  const refused = approval === 'never';
  await writer.append({
    type: 'user/message',
    text: delegationNotice({ parentId: parent.id, depth, continuable: mode === 'continuable', approvalRefused: refused }),
    source: { kind: 'delegation', runtime: true },
  });
  const messageId = randomUUID();
  await writer.append({ type: 'inbox/accepted', messageId, text: request.prompt, source: { kind: 'delegation', fromSession: parent.id } });
  // Remote seam (issue 13): a remote provider's driver runs the child's turns.
  const composed = sameRole && seed ? { ...request, persona: sameRole } : request;
  const comp = { ...childComposition(ctx, header, composed, escalate, isolation.roots, gate), ...(provider.remote ? { remote: provider.remote } : {}) };
  const unregister = registerLocalTools(ctx, childId, mode, request, onOutput);
  const built = deps.build(writer, comp);
  try {
    // Seed 002: an interrupted caller publishes nothing (checked before the durable write;
    // an interrupt during it is handled by the caller, which cancels the published child).
    if (signal?.aborted) throw new SubagentError('CANCELLED', 'The delegating turn was interrupted before the subagent was created; nothing was started.');
    await writer.publish();
  } catch (err) {
    built.release();
    unregister();
    await isolation.undo();
    throw err;
  } finally {
    ctx.childIds.settled(childId);
  }
  ctx.residency.setDepth(childId, depth);
  return {
    childId,
    messageId,
    agent: built.agent,
    release: () => {
      built.release();
      unregister();
    },
  };
}

/**
 * A provider that cannot filter tools (a remote program, a placed node's `arbor acp`) gives its
 * child every tool it has. A caller whose tools are limited, or an agent file that limits them,
 * may not start one: its child would call what it cannot. The one exception is a remote program
 * the caller may delegate to anyway: its own `delegate_*` tool is among the caller's.
 */
function checkUnfiltered(
  provider: { name: string; delegationTool?: string },
  ceiling: readonly string[] | undefined,
  filter: readonly string[] | undefined,
  callerTools: readonly string[],
): void {
  const limited = ceiling !== undefined || (filter !== undefined && callerTools.some((t) => !filter.includes(t)));
  if (!limited) return;
  if (provider.delegationTool && filter === undefined && ceiling?.includes(provider.delegationTool)) return;
  throw new SubagentError(
    'UNSUPPORTED_CAPABILITY',
    `Provider "${provider.name}" gives its child every tool it has, and your tools (or the agent file's) are limited: the child would call what you cannot. Leave placement or provider out, or do it with your own tools.`,
  );
}

/** The name a fork's header gives the role it took from its parent: the parent's agent file, label, else "subagent". */
function parentName(parent: Agent['session']): string {
  const d = descriptorOf(parent.header, parent.events);
  return parent.header.agent?.name ?? d?.agent ?? d?.label ?? 'subagent';
}
