import { effectiveApproval } from '../policy/approval';
import { effectiveSandbox } from '../policy/sandbox';
import type { Persona } from '../scope/prompt';
import type { ApprovalPolicy, EventDraft, SandboxMode, SessionEvent, SessionHeader, SubagentDescriptorEvent } from '../session/events';
import { descriptorOf, policyOverrides } from '../session/folds';
import type { Session } from '../session/session';

export interface PolicySnapshot {
  sandbox?: SandboxMode;
  approval?: ApprovalPolicy;
}

/**
 * The parent's explicit overrides at the moment of delegation. Call it synchronously,
 * before the first await of a start: a switch the parent makes afterwards belongs to the
 * parent's future, never to this child. Deployment defaults are not copied.
 */
export function capturePolicy(parent: Session): PolicySnapshot {
  const o = policyOverrides(parent.events);
  const snap: PolicySnapshot = {};
  if (o.sandbox) snap.sandbox = o.sandbox.value;
  if (o.approval) snap.approval = o.approval.value;
  return snap;
}

/** The policy a session runs under now: its own switches over the deployment's defaults. */
export interface PolicyNow {
  sandbox: SandboxMode;
  approval: ApprovalPolicy;
}

/** `PolicyNow` of a session's events under the deployment's defaults (an unknown sandbox counts as read-only). */
export function policyNow(events: readonly SessionEvent[], defaults: { sandbox?: SandboxMode; approval: ApprovalPolicy }): PolicyNow {
  const o = policyOverrides(events);
  return { sandbox: effectiveSandbox(o, defaults.sandbox ?? 'read-only'), approval: effectiveApproval(o, defaults.approval) };
}

const RANK: Record<SandboxMode, number> = { 'read-only': 0, 'workspace-write': 1, 'full-access': 2 };

/**
 * What a parent's message to its child appends to the child first (decision 0125): the parent's
 * policy now, where it is narrower than the child's — never anything wider. A parent the user
 * narrowed after the child started cannot get its old width back through that child.
 */
export function narrowingFor(parent: PolicyNow, child: PolicyNow): EventDraft[] {
  const out: EventDraft[] = [];
  if (RANK[parent.sandbox] < RANK[child.sandbox]) out.push({ type: 'sandbox/mode', mode: parent.sandbox, source: 'delegation' });
  if (parent.approval === 'never' && child.approval !== 'never') out.push({ type: 'approval/policy', policy: 'never', source: 'delegation' });
  return out;
}

/**
 * The tools a child may inherit at most: the parent's own filter (its descriptor's, itself
 * already narrowed by its parent's at its start; a root's, or a way's, from its agent file), or
 * undefined for an unfiltered parent. Read synchronously with `capturePolicy`. A child's filter
 * is intersected with it, so no child — MCP tools included (decision 0055) — gets a tool its
 * parent could not call.
 */
export function captureToolCeiling(parent: Session): readonly string[] | undefined {
  return descriptorOf(parent.header, parent.events)?.toolFilter ?? parent.header.agent?.toolFilter;
}

/** A child's requested filter under its parent's ceiling: the intersection (or the ceiling itself when it asked for none). */
export function narrowFilter(asked: readonly string[] | undefined, ceiling: readonly string[] | undefined): string[] | undefined {
  if (!ceiling) return asked ? [...asked] : undefined;
  if (!asked) return [...ceiling];
  const allowed = new Set(ceiling);
  return asked.filter((n) => allowed.has(n));
}

/**
 * The role a session runs under, as its agent was composed: its descriptor's persona (a subagent
 * asked for one), else its header's agent — a root or a way started with an agent file, or a fork,
 * which keeps its source's role there (`headerFrom`, `createChild`). A fork is the same agent, so it
 * takes its parent's role unless its request names one: its system prompt, and so its request
 * head, is the parent's (decision 0006, amended in session 49). Read synchronously.
 */
export function capturePersona(parent: Session): Persona | undefined {
  return personaOf(parent.header, descriptorOf(parent.header, parent.events));
}

/** `capturePersona` from a header and the session's own descriptor (a cold resume reads both from the log). */
export function personaOf(header: SessionHeader, d: SubagentDescriptorEvent | undefined): Persona | undefined {
  if (d?.persona !== undefined) return { text: d.persona, ...(d.personaComplete ? { complete: true } : {}) };
  // A spawned child without one runs the deployment's role: an agent in its header is not its own.
  if (d && header.origin !== 'fork') return undefined;
  const a = header.agent;
  return a?.persona ? { text: a.persona, ...(a.personaComplete ? { complete: true } : {}) } : undefined;
}
