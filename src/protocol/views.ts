// Part of the wire contract (src/protocol.ts re-exports it): what a chat shows besides the tree —
// transcript entries, approvals, grants, servers, settings, queue, rewind previews.

import type { ApprovalPolicy, ModelSource, SandboxMode, StopReason } from './tree';

export interface ToolCallView {
  id: string;
  name: string;
  arguments: string;
}

export type MessageSourceKind = 'user' | 'followup' | 'subagent-report' | 'subagent-settled' | 'subagent-result' | 'goal' | 'delegation' | 'hook';

/** One renderable item of a transcript (runtime-only events are not sent). */
export type TranscriptEntry =
  | { kind: 'user'; seq: number; at: string; text: string; source: MessageSourceKind; fromSession?: string; compacted?: boolean }
  | {
      kind: 'assistant';
      seq: number;
      at: string;
      text: string;
      reasoning?: string;
      toolCalls?: ToolCallView[];
      usage?: { promptTokens: number; completionTokens: number; cacheHitTokens?: number };
    }
  | { kind: 'tool'; seq: number; at: string; callId: string; name: string; content: string; isError: boolean }
  | { kind: 'turn'; seq: number; at: string; phase: 'start' | 'end'; stopReason?: StopReason; error?: string; errorCode?: string }
  | { kind: 'marker'; seq: number; at: string; text: string }
  /** One hook run (decision 0057), as one compact line: "hook PreToolUse blocked run_command: reason". */
  | { kind: 'hook'; seq: number; at: string; text: string; outcome: 'ok' | 'blocked' | 'error' | 'timeout' };

/** A pending approval, tagged with the asking session and its lineage. */
export interface ApprovalPrompt {
  requestId: string;
  sessionId: string;
  /** The asking session first, then its ancestors. */
  lineage: string[];
  tool: string;
  summary: string;
  reason: string;
  /** What "allow for this conversation" would cover (paths relative to the workspace); absent when it is not offered. */
  grant?: GrantScopeView;
  /** Why "allow for this conversation" is not offered, when the card should say so. */
  noGrant?: string;
  /** What will happen: a unified diff against the current file, or a new file's content. */
  preview?: { kind: 'diff' | 'content'; text: string };
  /** False: a denial's reason would reach nobody (an ACP agent hears only `reject_once`), so none is asked for. */
  reasonHeard?: false;
}

/** The scope of a grant: a command prefix (`npm test`) or one exact real path. */
export interface GrantScopeView {
  kind: 'command-prefix' | 'path';
  value: string;
}

/** One MCP server as the panel lists it (decision 0055): where it came from, its state, why, its tools. */
export interface McpServerView {
  name: string;
  /** `workspace` (.mcp.json), `vscode` (.vscode/mcp.json), `user` (the setting), `cli`, `acp`. */
  source: string;
  phase: 'needs-allow' | 'starting' | 'ready' | 'restarting' | 'failed' | 'stopped';
  why?: string;
  toolCount: number;
}

/** An active "allow for this conversation" grant of a session. */
export interface GrantView {
  grantId: string;
  tool: string;
  scope: GrantScopeView;
  at: string;
}

/**
 * The project files in effect (decision 0056): instruction files (AGENTS.md / CLAUDE.md, the
 * user's), the agents defined in files, and the files that are not agents with why. Paths are
 * workspace-relative (the user's files: "~/…").
 */
export interface ProjectFilesView {
  instructions: { path: string; level: 'user' | 'workspace'; bytes: number; included: number }[];
  skipped: { path: string; why: string }[];
  /** Bytes the size cap left out of the prompt (0: none). */
  cutBytes: number;
  maxBytes: number;
  agents: { name: string; description: string; path: string; tools?: string[]; model?: string; sandbox?: SandboxMode }[];
  errors: { path: string; line: number; message: string }[];
}

export interface PanelSettings {
  sandbox: SandboxMode;
  approval: ApprovalPolicy;
  /** Workspace Trust: restricted mode makes Arbor read-only with no commands. */
  restricted: boolean;
  hasApiKey: boolean;
  /** What answers: `demo` shows how to switch to a real endpoint, `none` how to set a key. */
  modelSource: ModelSource;
  model: string;
  /** Example prompts an empty panel offers as buttons (the demo lists its scenes; `arbor.chat.examplePrompts`). */
  examplePrompts?: ExamplePrompt[];
  /** Whether commands run in an OS sandbox here (absent until probed): the mode indicator warns when none can start. */
  osSandbox?: OsSandboxView;
}

/** An empty panel's button: `text` sent as a new conversation, or (with `goalRounds`) set as a new conversation's goal. */
export interface ExamplePrompt {
  text: string;
  /** A goal button: the new conversation's goal, armed, with this round limit. */
  goalRounds?: number;
}

export interface OsSandboxView {
  active: boolean;
  /** One sentence: what confines commands, or why nothing does and what to install. */
  detail: string;
  /** Whether sandboxed commands may use the network (`arbor.policy.network`). */
  network: boolean;
}

/** A message accepted by a session's inbox that has not run yet (decision 0011). */
export interface QueuedMessageView {
  messageId: string;
  text: string;
  source: MessageSourceKind;
  /** When it was accepted. */
  at: string;
}

/** Streamed text of the reply in progress, not yet in the log (decision 0010). */
export interface PartialReply {
  text: string;
  reasoning: string;
}

/** What a rewind brings back: the files, the conversation (a fork at that point), or both (decision 0059). */
export type RewindWhat = 'files' | 'conversation' | 'both';
export type RewindChoiceView = 'restore' | 'keep';

/** One file of a rewind's preview: what happens to it, its diff (current → restored), and a conflict that needs the human's choice. */
export interface RewindFileView {
  /** Relative to its workspace folder. */
  path: string;
  action: 'restore' | 'remove' | 'create';
  diff: string;
  conflict?: { reason: 'changed-by-other' | 'edited-since' | 'unavailable'; text: string };
}

/** A rewind's preview: nothing is written until it is applied with its `token`. */
export interface RewindPreview {
  token: string;
  /** An undo of an earlier rewind. */
  undo: boolean;
  files: RewindFileView[];
}
