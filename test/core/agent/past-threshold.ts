import type { Agent } from '../../../src/core/agent/agent';
import { type HarnessPerTest, makeHarness } from '../../support/harness';

/**
 * A harness that compacts at 50 prompt tokens, and an agent after two turns whose last request
 * passed that: its next turn compacts first.
 */
export async function agentPastThreshold(w: HarnessPerTest): Promise<Agent> {
  await w.t.cleanup();
  w.t = await makeHarness(w.server, { compaction: { thresholdTokens: 50, keepTurns: 1 } });
  return agentAfterTwoTurns(w, 'first question '.repeat(20), 'first answer '.repeat(20));
}

/** A new agent of `w`'s harness after two whole turns: `first` answered `answer`, then 'second question' answered 'second answer'. */
export async function agentAfterTwoTurns(w: HarnessPerTest, first = 'first question', answer = 'first answer'): Promise<Agent> {
  const agent = await w.t.h.createSession();
  w.server.enqueue({ text: answer });
  await agent.accept(first);
  await agent.idle();
  w.server.enqueue({ text: 'second answer' });
  await agent.accept('second question');
  await agent.idle();
  return agent;
}
