import type { Persona } from '../scope/prompt';
import type { ApprovalPolicy, SandboxMode, SessionHeader, SubagentDescriptorEvent } from '../session/events';
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
