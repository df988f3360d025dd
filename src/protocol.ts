// The host ⇄ webview wire contract (DESIGN §9). With src/protocol/ a leaf: it imports nothing from
// outside that folder (the layer check holds it so), so the webview takes its types, the command ids and a few pure
// predicates from it without ever seeing core or the VS Code API (decision 0031).
// One `type` key, `noun/verb` names; requests carry an `id` and are answered once, by
// `request/done` (`RequestResults`). The host checks every incoming message against
// src/extension/validate-message.ts before a handler sees it.
// Updates are deltas (a node changed, entries appended), never whole-state dumps,
// except the one snapshot answering `webview/ready`.

import type { HostCommand, TreeNode, WaysView, WorkflowRunView, WorktreeConflictView, WorktreeOrphanView } from './protocol/tree';
import type {
  ApprovalPrompt,
  GrantView,
  McpServerView,
  PanelSettings,
  PartialReply,
  ProjectFilesView,
  QueuedMessageView,
  RewindChoiceView,
  RewindPreview,
  RewindWhat,
  TranscriptEntry,
} from './protocol/views';

export * from './protocol/commands';
export * from './protocol/tree';
export * from './protocol/views';

// ── webview → host ────────────────────────────────────────────────────────────

export type WebviewToHost =
  /** Mounted and listening; the host answers with a snapshot. A transcript tab names its session. */
  | { type: 'webview/ready'; view: 'panel' | 'transcript'; sessionId?: string }
  /**
   * The user selected a tree node: the chat shows that session. `selection`: the host's number of
   * the selection this view last knew (decision 0120); `restored`: not a click but the selection
   * saved before a reload, which the host drops when it selected anything since.
   */
  | { type: 'session/select'; sessionId: string; selection?: number; restored?: true }
  /** Start a new conversation: nothing is stored until its first message (which also titles it). */
  | { type: 'session/new'; id: string }
  /** Open the sandbox / approval picker, for this session when given (the mode indicator beside the input). */
  | { type: 'policy/pick'; sessionId?: string }
  /**
   * Send text to a session (a child goes through the runtime's follow-up); no sessionId = a new
   * conversation. `selection` (here and on every message of `SelectionBound`): composed against the
   * panel's selection, the number of that selection — the host refuses it when the panel's
   * selection has since moved to another session (`SELECTION_CHANGED`, decision 0120).
   */
  | { type: 'chat/send'; id: string; sessionId?: string; text: string; selection?: number }
  /** Stop the session's running turn (its inbox is kept). */
  | { type: 'agent/interrupt'; id: string; sessionId: string; selection?: number }
  /** A human's "Cancel workflow" on a run's node: the script stops, its running agents are cancelled. */
  | { type: 'workflow/cancel'; id: string; runId: string }
  /** Fork a session from the end of the turn holding `seq` (a message's Fork, composed against the panel's selection). */
  | { type: 'session/fork'; id: string; sessionId: string; seq: number; selection?: number }
  /** Preview a rewind of the files `sessionId` (with `subtree`, and its descendants) changed after `seq`; with `undo`, of undoing the rewind recorded at `seq`. Writes nothing. */
  | { type: 'rewind/preview'; id: string; sessionId: string; seq: number; subtree: boolean; undo?: boolean; selection?: number }
  /** Apply a previewed rewind (`token`; `choices` per file of the preview, a conflict needs one), fork the conversation at `seq`, or both. */
  | {
      type: 'rewind/apply';
      id: string;
      sessionId: string;
      seq: number;
      what: RewindWhat;
      token?: string;
      choices: (RewindChoiceView | null)[];
      selection?: number;
    }
  /** Open (or reveal) a session's transcript in an editor tab. */
  | { type: 'transcript/open'; sessionId: string }
  /** Earlier entries of a long transcript (paging backwards). */
  | { type: 'transcript/more'; id: string; sessionId: string; beforeSeq: number }
  /** `remember` (with allow): allow for this conversation; `reason` (with deny): reaches the model. */
  | { type: 'approval/answer'; requestId: string; decision: 'allow' | 'deny'; remember?: boolean; reason?: string }
  /** Run the failed turn ending at `seq` again: its user message is sent once more. */
  | { type: 'chat/retry'; id: string; sessionId: string; seq: number; selection?: number }
  /** A notice's button: run one of Arbor's commands (set the key, open the model settings). */
  | { type: 'command/run'; command: HostCommand }
  /** Cancel a queued message before it runs (durable: it never runs, even after a restart). */
  | { type: 'queue/withdraw'; id: string; sessionId: string; messageId: string; selection?: number }
  /** "Send now": a session waiting after an interrupt works through its queue (FIFO, from the head). */
  | { type: 'queue/run'; id: string; sessionId: string; selection?: number }
  /** Revoke an "allow for this conversation" grant of a session. */
  | { type: 'approval/revoke'; id: string; sessionId: string; grantId: string }
  /** A human's budget on a session's subtree (`null` removes it); checked again by the host. */
  | { type: 'budget/set'; id: string; sessionId: string; budget: { maxTokens?: number; maxCostUsd?: number } | null }
  /** "Set Budget" on a node: the host asks for the amount (an input box). */
  | { type: 'budget/pick'; sessionId: string }
  /** Goals (a human action: set and resume arm the goal in this window). */
  | { type: 'goal/set'; id: string; sessionId: string; objective: string; maxRounds?: number }
  /** A goal on a new conversation titled by its objective (an example prompt's goal button). */
  | { type: 'goal/start'; id: string; objective: string; maxRounds: number }
  | { type: 'goal/pause'; id: string; sessionId: string; selection?: number }
  | { type: 'goal/resume'; id: string; sessionId: string; selection?: number }
  | { type: 'goal/clear'; id: string; sessionId: string; selection?: number }
  | { type: 'goal/limit'; id: string; sessionId: string; maxRounds: number; selection?: number }
  /** Start a new conversation with an agent defined in a file (its persona, tools, model; its sandbox only narrows). */
  | { type: 'agent/start'; id: string; agent: string }
  /** A worktree child's changes in VS Code's diff editor (decision 0060). */
  | { type: 'worktree/review'; id: string; sessionId: string; selection?: number }
  /** Merge a worktree child's changes into the workspace's files; a conflict changes nothing. */
  | { type: 'worktree/apply'; id: string; sessionId: string; selection?: number }
  | { type: 'worktree/discard'; id: string; sessionId: string; selection?: number }
  | { type: 'worktree/keep'; id: string; sessionId: string; selection?: number }
  /** Remove every orphaned worktree the panel's notice lists. */
  | { type: 'worktree/clean'; id: string }
  /** "Try N ways…" on a message (decision 0061): the host asks how many ways and, optionally, a model or agent per way. */
  | { type: 'bestof/start'; id: string; sessionId: string; seq: number }
  | { type: 'bestof/view'; id: string; group: string }
  /** "Apply this one": part 2's apply of that way into the conversation's files; a conflict changes nothing. */
  | { type: 'bestof/choose'; id: string; group: string; sessionId: string }
  /** Discard every other way's worktree (after one was applied). */
  | { type: 'bestof/discard-others'; id: string; group: string; sessionId: string }
  /** A human's task for a node, run on a configured placement as its continuable child (decision 0074). */
  | { type: 'placement/start'; id: string; sessionId: string; placement: string; prompt: string };

// ── host → webview ────────────────────────────────────────────────────────────

export type HostToWebview =
  /** Full state, sent once per `webview/ready`; later updates are deltas. `selection`: the number of `selected` (absent: 0). */
  | {
      type: 'state/snapshot';
      nodes: TreeNode[];
      selected?: string;
      selection?: number;
      settings: PanelSettings;
      approvals: ApprovalPrompt[];
    }
  | { type: 'tree/node'; node: TreeNode }
  | { type: 'tree/removed'; id: string }
  /** The transcript of a session from `firstSeq` (the newest page), replacing what was shown. */
  | { type: 'transcript/reset'; sessionId: string; entries: TranscriptEntry[]; hasMore: boolean; partial?: PartialReply }
  | { type: 'transcript/append'; sessionId: string; entries: TranscriptEntry[] }
  /** Streamed text not yet in the log (throttled); cleared by the next assistant entry. */
  | { type: 'stream/delta'; sessionId: string; kind: 'text' | 'reasoning'; delta: string }
  | { type: 'settings/changed'; settings: PanelSettings }
  | { type: 'approval/requested'; prompt: ApprovalPrompt }
  | { type: 'approval/resolved'; requestId: string; decision: 'allow' | 'deny' }
  /** The active grants of a session (sent with its transcript and whenever they change). */
  | { type: 'grants/list'; sessionId: string; grants: GrantView[] }
  /** The MCP servers and their state, whole (a handful of rows): on ready and whenever one moves. */
  | { type: 'mcp/servers'; servers: McpServerView[] }
  /** Put the keyboard focus in the chat input (the "focus chat input" keybinding). */
  | { type: 'input/focus' }
  /** A new conversation is being started ("+"): nothing selected, the input takes the focus; it is created at its first message. */
  | { type: 'draft/start'; selection: number }
  /** "Rewind…" from a message's context menu: the view showing the session opens its rewind at `seq` (decision 0059). */
  | { type: 'rewind/open'; sessionId: string; seq: number }
  /**
   * The host selected a session (a fork was created, a tab opened), or followed the panel's click.
   * `selection`: its number — every change of a panel's selection gets the next one, from the host
   * alone (decision 0120); the panel adopts a selection only when its number is newer than its own.
   */
  | { type: 'session/selected'; sessionId: string; selection: number }
  /** The answer to a request (a message carrying `id`): see `RequestResults`. */
  | RequestDone
  /**
   * The session's queued messages, whole (a short list). `queued`: behind a running turn, they
   * run on their own; `waiting`: the last turn was interrupted (or the session is not loaded),
   * they wait for "Send now" or the next message, and run before it.
   */
  | { type: 'queue/changed'; sessionId: string; state: 'queued' | 'waiting'; messages: QueuedMessageView[] }
  /** A workflow run tab's content; `null` with what happened and what to do when it cannot be shown (its conversation was deleted). */
  | { type: 'workflow/view'; nodeId: string; view: WorkflowRunView }
  | { type: 'workflow/view'; nodeId: string; view: null; problem: string }
  /** Worktrees nothing live owns (decision 0060): sent to the panel after the snapshot and after a clean; empty: none. */
  | { type: 'worktree/orphans'; orphans: WorktreeOrphanView[] }
  /** The project files in effect: sent after the snapshot and whenever one changes. */
  | { type: 'project/files'; files: ProjectFilesView }
  /** The host's answer to a message that failed validation. */
  | { type: 'message/rejected'; code: 'BAD_MESSAGE'; detail: string };

// ── requests and their answers ────────────────────────────────────────────────

/**
 * The requests (the webview's messages that carry an `id`) and what the success answer to each
 * carries besides `{ type: 'request/done', id, ok: true }`. Every request is answered once, by
 * `request/done`: the webview's `request()` resolves with this, the host's request handlers
 * return it. A failure answers `ok: false` with the error's text and its code, when it had one.
 */
export interface RequestResults {
  /** The new conversation's session (created by its first message). */
  'chat/send': { sessionId: string };
  'session/new': NoResult;
  'agent/interrupt': { sessionId: string };
  'workflow/cancel': NoResult;
  /** The fork. */
  'session/fork': { sessionId: string };
  'rewind/preview': { preview: RewindPreview };
  /** Files written back and left; `undoSeq`: the rewind's record, for "Undo rewind"; `forkId`: the conversation's fork. */
  'rewind/apply': { restored: number; kept: number; undoSeq?: number; forkId?: string };
  /** Older entries (the page before `beforeSeq`). */
  'transcript/more': { sessionId: string; entries: TranscriptEntry[]; hasMore: boolean };
  'chat/retry': { sessionId: string };
  'queue/withdraw': { sessionId: string };
  'queue/run': { sessionId: string };
  'approval/revoke': { sessionId: string };
  'goal/set': { sessionId: string };
  /** The new conversation. */
  'goal/start': { sessionId: string };
  'budget/set': { sessionId: string };
  'goal/pause': { sessionId: string };
  'goal/resume': { sessionId: string };
  'goal/clear': { sessionId: string };
  'goal/limit': { sessionId: string };
  /** The new conversation. */
  'agent/start': { sessionId: string };
  /** How many files the diff editor shows. */
  'worktree/review': { files: number };
  /** `applied: false`: the conflicts, and nothing was changed. */
  'worktree/apply': { applied: boolean; files: string[]; conflicts: WorktreeConflictView[] };
  'worktree/discard': NoResult;
  /** The branch its work stays on. */
  'worktree/keep': { branch: string };
  /** How many orphaned worktrees were removed. */
  'worktree/clean': { cleaned: number };
  /** The ways started (none: the human cancelled the questions). */
  'bestof/start': { group?: string; ways: string[] };
  'bestof/view': WaysView;
  'bestof/choose': { applied: boolean; files: string[]; conflicts: WorktreeConflictView[] };
  'bestof/discard-others': { discarded: number };
  /** The placed child started. */
  'placement/start': { childId: string };
}
export type NoResult = Record<never, never>;
export type RequestType = keyof RequestResults;
export type RequestMessage<K extends RequestType = RequestType> = Extract<WebviewToHost, { type: K }>;
/** A request as the webview writes it: `request()` adds the id. */
export type RequestBody<K extends RequestType> = K extends RequestType ? Omit<RequestMessage<K>, 'id'> : never;

/** The success answer to a request of type `K`. */
export type RequestSucceeded<K extends RequestType = RequestType> = K extends RequestType
  ? { type: 'request/done'; id: string; ok: true } & RequestResults[K]
  : never;
export interface RequestFailed {
  type: 'request/done';
  id: string;
  ok: false;
  /** What went wrong, in words. */
  error: string;
  /** The error's code (`HarnessError`, `StoreError`, `GoalError`, …), when it had one: the panel turns it into what to do. */
  code?: string;
}
export type RequestDone<K extends RequestType = RequestType> = RequestSucceeded<K> | RequestFailed;

/**
 * Per request, whether it may carry the panel selection it was composed under (`selection`), and
 * how the user does it again when the host refuses it: `typed` (its text goes back to the input)
 * or `action` (a button, Fork, Rewind… done again by hand); false exactly for the messages without
 * that field, so a table of this type (validate-message.ts) is checked by the compiler against
 * the messages themselves.
 */
export type SelectionBound = { readonly [K in RequestType]: 'selection' extends keyof RequestMessage<K> ? SelectionRedo : false };
/** How a request refused for a moved selection is done again (see `SelectionBound`). */
export type SelectionRedo = 'typed' | 'action';

/** Holds at compile time: the requests are exactly the messages with an `id`. */
export const REQUESTS_ARE_THE_MESSAGES_WITH_AN_ID: Same<Extract<WebviewToHost, { id: string }>['type'], RequestType> = true;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
