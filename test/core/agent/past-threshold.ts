import type { Agent } from '../../../src/core/agent/agent';
import { type HarnessPerTest, makeHarness } from '../../support/harness';

/**
 * A harness that compacts at 50 prompt tokens, and an agent after two turns whose last request
 * passed that: its next turn compacts first.
 */
export async function agentPastThreshold(w: HarnessPerTest): Promise<Agent> {
  await w.t.cleanup();
  w.t = await makeHarness(w.server, { compaction: { thresholdTokens: 50, keepTurns: 1 } });
  const agent = await w.t.h.createSession();
  w.server.enqueue({ text: 'first answer '.repeat(20) });
  await agent.accept('first question '.repeat(20));
  await agent.idle();
  w.server.enqueue({ text: 'second answer' });
  await agent.accept('second question');
  await agent.idle();
  return agent;
}
