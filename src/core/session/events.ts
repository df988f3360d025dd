import type { CompactionEndEvent, CompactionStartEvent, CompactionSummaryEvent } from './events/compaction';
import type { GoalChangeEvent } from './events/goal';
import type { HookRunEvent } from './events/hook';
import type { InboxAcceptedEvent, InboxClaimedEvent, InboxPausedEvent, InboxWithdrawnEvent } from './events/inbox';
import type { AssistantMessageEvent, ToolResultEvent, UserMessageEvent } from './events/message';
import type { ApprovalGrantEvent, ApprovalPolicyEvent, BudgetSetEvent, SandboxModeEvent } from './events/policy';
import type { EndSeedEvent, SubagentDescriptorEvent, SubagentRemoteEvent } from './events/subagent';
import type { RequestHeaderEvent, TurnEndEvent, TurnStartEvent } from './events/turn';
import type { WorkflowEvent } from './events/workflow';
import type { CheckpointEvent, WorktreeEvent } from './events/workspace';

// The session log's vocabulary (DESIGN §2). Event `type` names are a contract with
// the store, the CLI, the webview and tests; shapes may grow, names may not change.
// Each family's shapes live in `events/<family>.ts`; this file is the one place that
// assembles them into `SessionEvent` (and so into `EventType`, whose every member
// `validate.ts`'s `EVENT_RULES` must have a rule for, or the build fails). Importers
// take every event type from here.

export type * from './events/compaction';
export type * from './events/goal';
export type * from './events/header';
export type * from './events/hook';
export type * from './events/inbox';
export type * from './events/message';
export type * from './events/policy';
export type * from './events/subagent';
export type * from './events/turn';
export type * from './events/workflow';
export type * from './events/workspace';

export type SessionEvent =
  | UserMessageEvent
  | AssistantMessageEvent
  | ToolResultEvent
  | TurnStartEvent
  | TurnEndEvent
  | RequestHeaderEvent
  | InboxAcceptedEvent
  | InboxClaimedEvent
  | InboxWithdrawnEvent
  | InboxPausedEvent
  | SandboxModeEvent
  | ApprovalPolicyEvent
  | ApprovalGrantEvent
  | SubagentDescriptorEvent
  | SubagentRemoteEvent
  | EndSeedEvent
  | CompactionStartEvent
  | CompactionSummaryEvent
  | CompactionEndEvent
  | GoalChangeEvent
  | BudgetSetEvent
  | WorkflowEvent
  | HookRunEvent
  | CheckpointEvent
  | WorktreeEvent;

export type EventType = SessionEvent['type'];

/** What a caller hands to `append`: `seq` and `at` are filled in when absent. */
export type EventDraft = SessionEvent extends infer E ? (E extends SessionEvent ? Omit<E, 'seq' | 'at'> & { seq?: number; at?: string } : never) : never;

export type EventOf<T extends EventType> = Extract<SessionEvent, { type: T }>;
