import type { Agent } from '../../../src/core/agent/agent';
import type { HarnessConfig } from '../../../src/core/harness';
import type { SessionEvent } from '../../../src/core/session/events';
import type { WorkflowInput } from '../../../src/core/workflow/input';
import type { RunOutcome } from '../../../src/core/workflow/run';
import { harnessPerTest } from '../../support/harness';
import type { ChatBody, Reply } from '../../support/model-server';

/** The task a child was given: the last user message of its request. */
export function promptOf(body: ChatBody): string {
  for (let i = body.messages.length - 1; i >= 0; i--) if (body.messages[i].role === 'user') return String(body.messages[i].content ?? '');
  return '';
}

/**
 * A harness per test with one live root, and `run(script)` that calls the engine as the
 * `workflow` tool would from the root's turn. Children answer through `reply(prompt)`
 * (default: `did <prompt>`).
 */
export function workflowWorld(overrides: Partial<HarnessConfig> = {}) {
  const w = harnessPerTest(overrides);
  let root: Agent;
  let reply: (prompt: string, body: ChatBody) => Reply = (p) => ({ text: `did ${p}` });
  beforeEach(async () => {
    reply = (p) => ({ text: `did ${p}` });
    w.server.setFallback((body) => reply(promptOf(body), body));
    root = await w.t.h.createSession();
  });
  return {
    w,
    get root() {
      return root;
    },
    get engine() {
      return w.t.h.workflows.engine;
    },
    replies(fn: (prompt: string, body: ChatBody) => Reply) {
      reply = fn;
    },
    run(script: string, extra: Partial<WorkflowInput> = {}, signal = new AbortController().signal): Promise<RunOutcome> {
      return w.t.h.workflows.engine.run(
        { script, meta: { name: 'test', description: 'a test run' }, ...extra },
        { sessionId: root.id, signal, callId: 'call_1' },
      );
    },
    events(type: string): SessionEvent[] {
      return root.session.events.filter((e) => e.type === type);
    },
  };
}

export const dataOf = (e: SessionEvent) => (e as unknown as { data: Record<string, unknown> }).data;
