import type {
  ApprovalPolicy,
  PolicySource,
  SandboxMode,
  SessionEvent,
  SessionHeader,
  SubagentDescriptorEvent,
} from './events';

export interface Override<T> {
  value: T;
  source: PolicySource;
  seq: number;
}

export interface PolicyOverrides {
  sandbox?: Override<SandboxMode>;
  approval?: Override<ApprovalPolicy>;
}

/**
 * The session's explicit policy overrides, last event wins. A fork inherits its seed's
 * switches; delegation events appended after the seed override them, and the child's own
 * later switches override those.
 */
export function policyOverrides(events: readonly SessionEvent[]): PolicyOverrides {
  const out: PolicyOverrides = {};
  for (const e of events) {
    if (e.type === 'sandbox/mode') out.sandbox = { value: e.mode, source: e.source, seq: e.seq };
    else if (e.type === 'approval/policy') out.approval = { value: e.policy, source: e.source, seq: e.seq };
  }
  return out;
}

/**
 * The child's own descriptor: the last `subagent/descriptor` after the seed. A fork's seed
 * may hold an ancestor's descriptor; that one describes the ancestor, never this session.
 */
export function descriptorOf(header: SessionHeader, events: readonly SessionEvent[]): SubagentDescriptorEvent | undefined {
  const from = header.seedLength ?? 0;
  for (let i = events.length - 1; i >= from; i--) {
    const e = events[i];
    if (e.type === 'subagent/descriptor') return e;
  }
  return undefined;
}
