import type { ToolCallHooks } from '../agent/config';
import type { FeatureHooks, FeatureRow, RowContext } from '../feature/rows';
import { DEFAULT_SECTIONS } from '../scope/prompt';
import type { InboxAcceptedEvent } from '../session/events';
import { delegationTools } from '../subagent/tools';
import type { Tool, ToolResult } from '../tools/tool';
import { type WorkspaceToolOptions, workspaceTools } from '../tools/workspace';

/** The workspace tool set (files, search, commands under the OS sandbox). */
export function workspaceRow(options: WorkspaceToolOptions): FeatureRow<void> {
  return { name: 'workspace', wire: ({ tools }) => register(tools, workspaceTools(options)) };
}

function register(tools: RowContext['tools'], list: readonly Tool[]): { service: undefined } {
  for (const t of list) tools.register(t);
  return { service: undefined };
}

/** The default prompt sections every agent's system prompt is assembled from. */
export const promptRow: FeatureRow<void> = {
  name: 'prompt',
  wire({ prompts }) {
    for (const s of DEFAULT_SECTIONS) prompts.register(s);
    return { service: undefined };
  },
};

/** Delegation: the tools every agent sees (the spawn and fork providers are the runtime's defaults). */
export const delegationRow: FeatureRow<void> = {
  name: 'delegation',
  wire: ({ tools, subagents }) => register(tools, delegationTools(subagents)),
};

/** The rows' hooks as one: every admit must say yes, the first block wins, after-hooks chain. */
export function composeHooks(all: readonly FeatureHooks[]): Required<Pick<FeatureHooks, 'opened' | 'stopped' | 'close' | 'whenQuiet' | 'isQuiet' | 'holds'>> &
  Pick<FeatureHooks, 'turnEnding' | 'compacting' | 'subagentStarting' | 'approvalAsked' | 'stepAnswered' | 'toolsStarting'> & {
    admit?: (sessionId: string, msg: InboxAcceptedEvent, signal?: AbortSignal) => boolean | Promise<boolean>;
    beforeToolCall?: ToolCallHooks['beforeToolCall'];
    afterToolCall?: ToolCallHooks['afterToolCall'];
  } {
  const admits = all.flatMap((h) => (h.admit ? [h.admit] : []));
  const befores = all.flatMap((h) => (h.beforeToolCall ? [h.beforeToolCall] : []));
  const afters = all.flatMap((h) => (h.afterToolCall ? [h.afterToolCall] : []));
  const starters = all.flatMap((h) => (h.toolsStarting ? [h.toolsStarting.bind(h)] : []));
  return {
    ...(admits.length ? { admit: (id: string, msg: InboxAcceptedEvent, signal?: AbortSignal) => allAdmit(admits, id, msg, signal) } : {}),
    ...(befores.length
      ? {
          beforeToolCall: async (c: Parameters<NonNullable<ToolCallHooks['beforeToolCall']>>[0]) => {
            for (const fn of befores) {
              const r = await fn(c);
              if (r) return r;
            }
            return undefined;
          },
        }
      : {}),
    ...(afters.length
      ? {
          afterToolCall: async (c: Parameters<NonNullable<ToolCallHooks['afterToolCall']>>[0]) => {
            let result: ToolResult = c.result;
            // Each hook on its own: one that throws keeps the result as it was and the next still
            // runs (the checkpoints' ends a command's count in its roots, roots-lock.ts).
            for (const fn of afters) {
              try {
                result = (await fn({ ...c, result })) ?? result;
              } catch {
                // the result as it was
              }
            }
            return result;
          },
        }
      : {}),
    ...firstAnswer(all, 'turnEnding'),
    ...firstAnswer(all, 'subagentStarting'),
    ...(all.some((h) => h.compacting)
      ? {
          compacting: async (id: string, reason: 'manual' | 'threshold', signal?: AbortSignal) => {
            for (const h of all) if (!signal?.aborted) await h.compacting?.(id, reason, signal);
          },
        }
      : {}),
    ...(all.some((h) => h.stepAnswered)
      ? {
          stepAnswered: (id: string) => {
            for (const h of all) h.stepAnswered?.(id);
          },
        }
      : {}),
    ...(starters.length
      ? {
          toolsStarting: (signal: AbortSignal) => {
            const pending = starters.flatMap((fn) => {
              const p = fn(signal);
              return p ? [p] : [];
            });
            return pending.length ? Promise.all(pending).then(() => undefined) : undefined;
          },
        }
      : {}),
    ...(all.some((h) => h.approvalAsked)
      ? {
          approvalAsked: (req, signal) => {
            for (const h of all) h.approvalAsked?.(req, signal);
          },
        }
      : {}),
    opened: async (agent) => {
      for (const h of all) await h.opened?.(agent);
    },
    // Every row is told in the Stop's tick (each enqueues its work synchronously), then awaited.
    stopped: async (ids) => {
      await Promise.all(all.map((h) => h.stopped?.(ids)));
    },
    close: async (why) => {
      for (const h of [...all].reverse()) await h.close?.(why);
    },
    whenQuiet: async () => {
      for (const h of all) await h.whenQuiet?.();
    },
    isQuiet: () => all.every((h) => h.isQuiet?.() ?? true),
    holds: (agent) => all.some((h) => h.holds?.(agent) ?? false),
  };
}

/** A hook whose rows answer in turn until one gives a reason (the first reason wins); absent when no row has it. */
function firstAnswer<K extends 'turnEnding' | 'subagentStarting'>(all: readonly FeatureHooks[], key: K): Pick<FeatureHooks, K> {
  const fns = all.flatMap((h) => (h[key] ? [h[key].bind(h)] : [])) as ((...a: unknown[]) => Promise<string | undefined>)[];
  if (fns.length === 0) return {} as Pick<FeatureHooks, K>;
  const composed = async (...a: unknown[]) => {
    for (const fn of fns) {
      const r = await fn(...a);
      if (r) return r;
    }
    return undefined;
  };
  return { [key]: composed } as Pick<FeatureHooks, K>;
}

/** Synchronous while every answer is (the agent then claims its message without an await). */
function allAdmit(
  admits: readonly NonNullable<FeatureHooks['admit']>[],
  id: string,
  msg: InboxAcceptedEvent,
  signal: AbortSignal | undefined,
  from = 0,
): boolean | Promise<boolean> {
  for (let i = from; i < admits.length; i++) {
    const r = admits[i](id, msg, signal);
    if (typeof r !== 'boolean') return Promise.resolve(r).then((v) => (v === true ? allAdmit(admits, id, msg, signal, i + 1) : false));
    if (!r) return false;
  }
  return true;
}
