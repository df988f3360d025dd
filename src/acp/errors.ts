import { RequestError } from '@agentclientprotocol/sdk/unstable';
import { describeError } from '../core/errors';
import type { SyncErrorCode } from '../core/placement/sync-wire';

// Every refusal `arbor acp` answers carries a code (in `data.code`) that says what happened
// and what to do, on the JSON-RPC error the method calls for.

export type AcpErrorCode =
  | 'RELATIVE_CWD'
  | 'NO_SUCH_FOLDER'
  | 'FILESYSTEM_ROOT'
  | 'HOME_FOLDER'
  | 'NOT_A_NODE'
  | 'UNKNOWN_SESSION'
  | 'NOT_A_ROOT'
  | 'PROMPT_RUNNING'
  | 'UNSUPPORTED_CONTENT'
  | 'EMPTY_PROMPT'
  | 'UNKNOWN_MODE'
  | 'TURN_FAILED'
  | 'MESSAGE_TOO_LARGE'
  | 'MESSAGE_TOO_DEEP'
  | 'WORKSPACE_UNAVAILABLE'
  | 'TOO_MANY_SESSIONS'
  | 'TOO_MANY_WORKSPACES';

/** ACP's "resource not found" (not one of the SDK's named constructors). */
const RESOURCE_NOT_FOUND = -32002;

export function invalidParams(code: AcpErrorCode, message: string): RequestError {
  return new RequestError(-32602, `Invalid params: ${message}`, { code, message });
}

export function invalidRequest(code: AcpErrorCode, message: string): RequestError {
  return new RequestError(-32600, `Invalid request: ${message}`, { code, message });
}

export function unknownSession(id: string): RequestError {
  return new RequestError(RESOURCE_NOT_FOUND, `Resource not found: session ${id}`, {
    code: 'UNKNOWN_SESSION',
    message: `No session ${id} on this connection; create it with session/new or open it with session/load first.`,
  });
}

/** Past a per-process cap (live sessions, open workspaces) with nothing idle to let go of. */
export function overLimit(code: 'TOO_MANY_SESSIONS' | 'TOO_MANY_WORKSPACES', message: string): RequestError {
  return new RequestError(-32600, `Invalid request: ${message}`, { code, message });
}

/** A workspace's harness could not open (its store cannot be made, or another Arbor holds it): the cause, in its words. */
export function workspaceUnavailable(root: string, err: unknown): RequestError {
  const why = describeError(err);
  return new RequestError(-32603, `Internal error: the workspace ${root} could not be opened: ${why}`, { code: 'WORKSPACE_UNAVAILABLE', message: why });
}

export function turnFailed(message: string): RequestError {
  return new RequestError(-32603, `Internal error: the turn failed: ${message}`, { code: 'TURN_FAILED', message });
}

/** The JSON-RPC error each sync refusal (decision 0081) goes out as: what the client named is wrong, or the work failed there. */
const SYNC_JSONRPC: Record<SyncErrorCode, number> = {
  SYNC_TOO_BIG: -32600,
  BAD_SYNC_NAME: -32602,
  UNSAFE_NODE: -32602,
  UNKNOWN_NODE: RESOURCE_NOT_FOUND,
  SYNC_FAILED: -32603,
};

export function syncRefused(code: SyncErrorCode, message: string): RequestError {
  return new RequestError(SYNC_JSONRPC[code], `${code}: ${message}`, { code, message });
}
