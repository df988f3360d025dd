import type { Agent } from '../../agent/agent';
import { describeRefused, refusedActions } from '../../session/refusals';
import { fail, ok } from '../../tools/result';
import type { ToolResult } from '../../tools/tool';
import { boundAnswer } from '../remote-bounds';
import type { SubagentControl } from '../surface';
import type { OneShotResult, SubagentRequest } from '../types';
import { json } from './shared';

/** What the child was refused (decision 0015): a "completed" answer must not hide it. */
function refusalsOf(agent: Agent): { count: number; listed: string[] } {
  const all = refusedActions(agent.session.events, agent.session.header.seedLength ?? 0);
  // Listed up to a bound (a remote program may ask thousands of times), the rest counted.
  const listed = all.slice(0, MAX_REFUSALS_LISTED).map(describeRefused);
  if (all.length > MAX_REFUSALS_LISTED) listed.push(`… and ${all.length - MAX_REFUSALS_LISTED} more`);
  return { count: all.length, listed };
}

const MAX_REFUSALS_LISTED = 20;

/** The child's result for its parent: its answer bounded (decision 0044), whatever the child (a remote program) wrote. */
function render(r: OneShotResult, refused: readonly string[]): string {
  return json({
    childId: r.childId,
    stopReason: r.stopReason,
    answer: boundAnswer(r.text),
    ...(refused.length ? { refused } : {}),
    ...(r.output !== undefined ? { output: r.output } : {}),
    ...(r.error ? { error: r.error } : {}),
  });
}

/**
 * Run a one-shot child for a tool call. Foreground: wait (an interrupt of the parent's
 * turn cancels the child) and answer with its result. Background: answer at once; the
 * result reaches the parent later as an ordinary job result (source `subagent-result`, seed
 * 000 §二), not a settlement notice: that belongs to an Activation ending (decision 0052).
 * Either way the child is disposed.
 */
export async function runOneShot(
  rt: SubagentControl,
  caller: Agent,
  provider: string,
  request: SubagentRequest,
  background: boolean,
  signal: AbortSignal,
): Promise<ToolResult> {
  const run = await rt.start(caller, provider, request, { signal });
  if (background) {
    void rt.trackBackground(
      run.result
        .then(async (r) => {
          const refused = refusalsOf(run.localAgent);
          // Its answer is durable in the child's log: a disposal that fails must not keep the
          // parent from hearing it.
          await run.dispose().catch(() => undefined);
          await rt.deliver(
            caller.id,
            `[background subagent ${request.label ?? r.childId} finished: ${r.stopReason}${refused.count ? ` · ${refused.count} refused` : ''}]\n${render(r, refused.listed)}`,
            {
              kind: 'subagent-result',
              fromSession: r.childId,
              stopReason: r.stopReason,
            },
          );
        })
        // The parent is gone (closed or deleted) before the answer reached it: the answer stays
        // in the child's log, and its node in the tree shows it.
        .catch(() => undefined),
    );
    return ok(json({ childId: run.id, status: 'started in background', next: 'Go on with your work; its answer arrives as a notice.' }));
  }
  const onAbort = () => void run.localAgent.cancel('interrupted', { keepInbox: false });
  signal.addEventListener('abort', onAbort, { once: true });
  if (signal.aborted) onAbort(); // aborted while the child was being published
  try {
    // Waiting on its child, a child caller lends its fan-out slot: nested waits cannot deadlock.
    const r = await rt.fanout.lend(caller.id, run.result);
    const text = render(r, refusalsOf(run.localAgent).listed);
    return r.stopReason === 'completed' ? ok(text) : fail('SUBAGENT', text);
  } finally {
    signal.removeEventListener('abort', onAbort);
    await run.dispose();
  }
}
