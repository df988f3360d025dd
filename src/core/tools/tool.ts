import type { JsonSchema } from '../model/json-schema';
import type { ApprovalPort } from '../policy/approval';
import type { GrantBook } from '../policy/grants';
import type { PolicyCeiling } from '../policy/sandbox';
import type { ApprovalPolicy, Refusal, SandboxMode } from '../session/events';

// The approval vocabulary lives in policy (it sits below tools in the layer order);
// re-exported here so `import { ApprovalPort } from '../tools/tool'` keeps working.
export type { ApprovalDecision, ApprovalPort, ApprovalReply, ApprovalRequest } from '../policy/approval';

export type { JsonSchema };

/**
 * Why a tool call failed, for hosts and tests; the model reads `content`, not this.
 * Optional: a result without a code is still a valid result.
 */
export type ToolErrorCode =
  | 'INVALID_ARGUMENTS'
  | 'INVALID_PATH'
  | 'OUTSIDE_WORKSPACE'
  | 'READ_ONLY'
  | 'APPROVAL_DENIED'
  | 'NOT_FOUND'
  | 'NOT_A_FILE'
  | 'NOT_A_DIRECTORY'
  | 'BINARY_FILE'
  | 'NO_MATCH'
  | 'AMBIGUOUS_MATCH'
  | 'INVALID_REGEX'
  | 'TIMEOUT'
  | 'CANCELLED'
  | 'EXIT_NONZERO'
  | 'IO_ERROR'
  | 'TOO_LARGE'
  | 'UNKNOWN_TOOL'
  /** A `beforeToolCall` hook answered instead of the tool (or failed: fail closed). */
  | 'BLOCKED'
  | 'SUBAGENT'
  | 'WORKFLOW'
  /** A goal operation was refused (the message names the GoalError code). */
  | 'GOAL';

export interface ToolResult {
  content: string;
  isError: boolean;
  code?: ToolErrorCode;
  /** The action was refused for want of approval; persisted on the `tool/result` event. */
  refusal?: Refusal;
}

/** Everything a tool may touch, handed in by the agent (tools take their I/O; pi-mono style). */
export interface ToolContext {
  sessionId: string;
  /** Real paths of the workspace folders; the first is the default cwd. */
  roots: readonly string[];
  sandbox: SandboxMode;
  approvalPolicy: ApprovalPolicy;
  /** The deployment's ceiling (decision 0125): an unconfined command under one narrower than full-access is refused without asking. */
  ceiling?: PolicyCeiling;
  approval?: ApprovalPort;
  /** This session's "allow for this conversation" grants (absent: nothing is remembered). */
  grants?: GrantBook;
  /** More paths a write needs approval for, with why (the host's session store, kept wherever it is). */
  protectedPaths?: readonly ProtectedPath[];
  signal: AbortSignal;
  /** The id of the model's tool call being run (set per call; the workflow engine records it). */
  callId?: string;
  /**
   * Say how a long call is going (a phase, a count): surfaced to hosts as the agent's
   * `onProgress` event, never written to the log nor shown to the model. Set per call by the
   * agent (absent when a tool is called outside an agent's turn: call it as `ctx.progress?.(…)`).
   * Cheap and synchronous; it never throws.
   */
  progress?: (text: string) => void;
}

export interface ProtectedPath {
  path: string;
  /** Said to the user and the model, e.g. "'store' holds Arbor's session logs; …". */
  reason: string;
}

export interface Tool {
  name: string;
  description: string;
  parameters: JsonSchema;
  /**
   * Arguments naming a file the call reads or writes. Calls of one step whose such
   * arguments reach the same real file run one after another, in call order (the rest
   * still run in parallel), so each sees the file as the calls before it left it.
   */
  pathArguments?: readonly string[];
  /** Run with arguments already parsed and checked against `parameters`. Never throws across this boundary: failures are results. */
  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}
