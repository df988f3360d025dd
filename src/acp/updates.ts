import * as path from 'node:path';
import type * as acp from '@agentclientprotocol/sdk/unstable';
import type { AssistantMessageEvent, SessionEvent, ToolCall, ToolResultEvent, UserMessageEvent } from '../core/session/events';

// Arbor's session events as ACP `session/update` payloads (decision 0037). Pure: the live
// stream and `session/load` replay use the same functions, so a loaded session reads as it
// streamed. Children's events map the same way, under the child's own session id.

export type Update = acp.SessionUpdate;

/** ACP's tool kinds for Arbor's tools: what a client may use to pick an icon or a policy. */
const TOOL_KINDS: Record<string, acp.ToolKind> = {
  read_file: 'read',
  write_file: 'edit',
  edit_file: 'edit',
  list_files: 'search',
  search_files: 'search',
  run_command: 'execute',
  subagent: 'think',
  subagent_fork: 'think',
  send_message: 'think',
  interrupt_agent: 'think',
  list_agents: 'think',
  workflow: 'think',
};

export function toolKind(name: string): acp.ToolKind {
  return Object.hasOwn(TOOL_KINDS, name) ? TOOL_KINDS[name] : 'other';
}

function parseArgs(raw: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(raw) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** One line a human reads in a client's tool list: the tool and what it acts on. */
function toolTitle(name: string, args: Record<string, unknown> | undefined): string {
  const s = (k: string): string | undefined => (typeof args?.[k] === 'string' ? (args[k] as string) : undefined);
  const subject = s('command') ?? s('path') ?? s('label') ?? s('pattern') ?? s('query') ?? s('to');
  const one = subject?.split('\n')[0];
  return one ? `${name}: ${one.length > 120 ? `${one.slice(0, 120)}…` : one}` : name;
}

/** The workspace files a call names, absolute (ACP paths are absolute), for "follow along". */
function locations(args: Record<string, unknown> | undefined, cwd: string | undefined): acp.ToolCallLocation[] | undefined {
  const p = args?.path;
  if (typeof p !== 'string' || !cwd) return undefined;
  return [{ path: path.resolve(cwd, p) }];
}

function toolCallUpdate(call: ToolCall, cwd: string | undefined): Update {
  const args = parseArgs(call.arguments);
  const locs = locations(args, cwd);
  return {
    sessionUpdate: 'tool_call',
    toolCallId: call.id,
    title: toolTitle(call.name, args),
    kind: toolKind(call.name),
    status: 'in_progress',
    rawInput: args ?? { arguments: call.arguments },
    ...(locs ? { locations: locs } : {}),
    _meta: { arbor: { tool: call.name } },
  };
}

export function toolResultUpdate(e: ToolResultEvent): Update {
  return {
    sessionUpdate: 'tool_call_update',
    toolCallId: e.callId,
    status: e.isError ? 'failed' : 'completed',
    content: [{ type: 'content', content: { type: 'text', text: e.content } }],
    ...(e.refusal ? { _meta: { arbor: { refusal: e.refusal } } } : {}),
  };
}

const text = (t: string): acp.ContentBlock => ({ type: 'text', text: t });

/**
 * A user/message as the client shows it. The human's own prompt is echoed only on replay (a
 * live client sent it); a runtime notice (a child settled or reported, a goal round, a
 * delegation task) keeps its origin in `_meta.arbor`.
 */
export function userMessageUpdates(e: UserMessageEvent, live: boolean): Update[] {
  if (e.surfaceOp) return []; // a compaction summary: the model's surface, not something said
  // Each message its own id (live and replayed alike): two notices in a row stay two messages.
  const messageId = `user-${e.seq}`;
  if (e.source.kind === 'user') return live ? [] : [{ sessionUpdate: 'user_message_chunk', content: text(e.text), messageId }];
  // The whole source, so another Arbor mirroring this session keeps each kind's fields (a report's mode, a settlement's stop reason).
  const { kind, ...fields } = e.source;
  const meta = { arbor: { source: kind, ...fields } };
  return [{ sessionUpdate: 'user_message_chunk', content: text(e.text), messageId, _meta: meta }];
}

/** Text and reasoning not yet streamed, then one `tool_call` per call. */
export function assistantUpdates(e: AssistantMessageEvent, streamed: { text: string; reasoning: string }, cwd: string | undefined): Update[] {
  const out: Update[] = [];
  const rest = (full: string | undefined, sent: string): string => (!full ? '' : full.startsWith(sent) ? full.slice(sent.length) : full);
  const reasoning = rest(e.reasoning, streamed.reasoning);
  const said = rest(e.text, streamed.text);
  if (reasoning) out.push({ sessionUpdate: 'agent_thought_chunk', content: text(reasoning) });
  if (said) out.push({ sessionUpdate: 'agent_message_chunk', content: text(said) });
  for (const c of e.toolCalls ?? []) out.push(toolCallUpdate(c, cwd));
  return out;
}

const NOTHING_STREAMED = { text: '', reasoning: '' };

/** A stored event as replay updates (`session/load`): everything the log says, in order. */
export function replayUpdates(e: SessionEvent, cwd: string | undefined): Update[] {
  if (e.type === 'user/message') return userMessageUpdates(e, false);
  if (e.type === 'assistant/message') return assistantUpdates(e, NOTHING_STREAMED, cwd);
  if (e.type === 'tool/result') return [toolResultUpdate(e)];
  return [];
}
