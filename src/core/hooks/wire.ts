import type { FeatureHooks, FeatureRow } from '../feature/rows';
import { decideApproval, describeDenial } from '../policy/approval';
import type { InboxAcceptedEvent, ToolCall } from '../session/events';
import { claudeCodeNamesOf } from '../tools/aliases';
import { fail, refused } from '../tools/result';
import type { ToolContext, ToolResult } from '../tools/tool';
import { toolNames } from './matcher';
import { type HookHost, HookService, type HooksOptions } from './service';

// The hooks row (decision 0057): where each Claude Code hook event fires in Arbor, and what its
// answer may change. A hook only ever narrows what the session's policy allows:
//  - PreToolUse: a block (exit 2, decision "block", permissionDecision "deny") answers the call
//    instead of the tool; "ask" asks the human through the session's own approval port (under
//    approval `never`, or with no port, that is a refusal); "allow" is no objection — the tool
//    still enforces its sandbox and approval, so a hook (a file in the workspace an agent might
//    have written) can never let through what the policy would refuse or ask about.
//  - PostToolUse: a block reason or additionalContext is added to what the model reads.
//  - UserPromptSubmit: a block drops a human's prompt before its turn (the run shows why).
//  - Stop / SubagentStop: a block makes the turn go on with the reason (bounded by the agent).
//  - SubagentStart: a block vetoes the child; nothing is created.
//  - PreCompact, Notification: observe only.

export function hooksRow(options: HooksOptions, extra: Pick<HookHost, 'budgetLeft' | 'secrets'> = {}): FeatureRow<HookService> {
  return {
    name: 'hooks',
    wire({ host }) {
      const service = new HookService(options, { resident: (id) => host.resident(id), store: host.store, ...extra });
      return { service, hooks: hooksOf(service) };
    },
  };
}

function hooksOf(s: HookService): FeatureHooks {
  return {
    beforeToolCall: (c) => (s.has('PreToolUse') ? preToolUse(s, c) : undefined),
    afterToolCall: (c) => (s.has('PostToolUse') ? postToolUse(s, c) : undefined),
    admit: (id, msg, signal) => (s.has('UserPromptSubmit') && fromHuman(msg) ? promptSubmit(s, id, msg, signal) : true),
    turnEnding: async (id, c) => {
      const place = s.placeOf(id);
      const sub = place.parentId !== undefined;
      const event = sub ? 'SubagentStop' : 'Stop';
      if (!s.has(event)) return undefined;
      const r = await s.fire({
        event,
        sessionId: id,
        ...(sub ? { match: [place.agent] } : {}),
        fields: { stop_hook_active: c.continued > 0, last_assistant_message: c.text },
        signal: c.signal, // a Stop kills the hook (decision 0099)
      });
      return r.block;
    },
    compacting: async (id, reason, signal) => {
      if (!s.has('PreCompact')) return;
      const trigger = reason === 'manual' ? 'manual' : 'auto';
      // A Stop kills the hook (decision 0099), as it does the compaction's request.
      await s.fire({ event: 'PreCompact', sessionId: id, match: [trigger], fields: { trigger, custom_instructions: '' }, signal });
    },
    subagentStarting: async (c) => {
      if (!s.has('SubagentStart')) return undefined;
      const type = c.label ?? c.provider;
      const r = await s.fire({
        event: 'SubagentStart',
        sessionId: c.parentId,
        match: [type, c.provider],
        fields: { agent_type: type, provider: c.provider, mode: c.mode, child_depth: c.depth, prompt: c.prompt },
        signal: c.signal, // the delegating turn's Stop kills it (decision 0127)
      });
      return r.block;
    },
    stepAnswered: (id) => s.flushRecords(id),
    approvalAsked: (req, signal) => {
      if (!s.has('Notification')) return;
      const message = `Arbor needs your permission to use ${req.tool}: ${req.summary}`;
      void s
        .fire({
          event: 'Notification',
          sessionId: req.sessionId,
          match: ['permission_prompt'],
          fields: { message, notification_type: 'permission_prompt', tool_name: req.tool },
          signal, // the ask's: a Stop that ends the ask kills the hook (decision 0127)
        })
        .catch(() => undefined);
    },
  };
}

/** The tool's name as Claude Code's scripts expect it (`Bash` for run_command), with Arbor's beside it. */
function toolFields(call: ToolCall, args: Record<string, unknown> | undefined): Record<string, unknown> {
  const input = { ...(args ?? {}) };
  // Claude Code's file tools name their path `file_path`: scripts written for them read it.
  if (typeof input.path === 'string' && input.file_path === undefined) input.file_path = input.path;
  return { tool_name: claudeCodeNamesOf(call.name)[0] ?? call.name, arbor_tool_name: call.name, tool_input: input, tool_use_id: call.id };
}

async function preToolUse(s: HookService, c: { call: ToolCall; args: Record<string, unknown>; ctx: ToolContext }): Promise<ToolResult | undefined> {
  const r = await s.fire({
    event: 'PreToolUse',
    sessionId: c.ctx.sessionId,
    match: toolNames(c.call.name),
    tool: c.call.name,
    fields: { ...toolFields(c.call, c.args), permission_mode: c.ctx.approvalPolicy === 'ask' ? 'default' : 'dontAsk' },
    signal: c.ctx.signal,
  });
  if (r.block) return fail('BLOCKED', `A PreToolUse hook blocked ${c.call.name}: ${r.block}`);
  if (r.decision !== 'ask') return undefined; // allow, or nothing said: the tool's own policy decides
  const why = r.decisionReason ?? 'a PreToolUse hook asks for your approval';
  const answer = await decideApproval(c.ctx, { tool: c.call.name, summary: `${c.call.name} ${JSON.stringify(c.args).slice(0, 300)}`, reason: why });
  if (answer.approved) return undefined; // the tool still enforces its own sandbox and approval
  return refused(`${c.call.name} was not run: a PreToolUse hook asked for approval (${why}) and ${describeDenial(answer.outcome, answer.reason)}`, {
    outcome: answer.outcome,
    summary: `${c.call.name} (hook: ${why})`,
  });
}

async function postToolUse(
  s: HookService,
  c: { call: ToolCall; args?: Record<string, unknown>; result: ToolResult; ctx: ToolContext },
): Promise<ToolResult | undefined> {
  const r = await s.fire({
    event: 'PostToolUse',
    sessionId: c.ctx.sessionId,
    match: toolNames(c.call.name),
    tool: c.call.name,
    fields: { ...toolFields(c.call, c.args), tool_response: { content: c.result.content, is_error: c.result.isError } },
    signal: c.ctx.signal, // a Stop kills it, as it does PreToolUse's (decision 0127)
  });
  const notes = [...(r.block ? [`PostToolUse hook: ${r.block}`] : []), ...(r.context ? [r.context] : [])];
  return notes.length ? { ...c.result, content: `${c.result.content}\n\n${notes.join('\n')}` } : undefined;
}

/** A prompt a human wrote (to a conversation, or to a child through the panel). */
function fromHuman(msg: InboxAcceptedEvent): boolean {
  return msg.source.kind === 'user' || (msg.source.kind === 'followup' && msg.source.fromSession === 'user');
}

async function promptSubmit(s: HookService, id: string, msg: InboxAcceptedEvent, signal?: AbortSignal): Promise<boolean> {
  const r = await s.fire({ event: 'UserPromptSubmit', sessionId: id, fields: { prompt: msg.text }, signal });
  return !r.block;
}
