import type { Harness } from '../core/harness';
import type { ControllerHooks } from './view-port';

// "Try N ways…" (decision 0061), whichever way it was asked for (a message's button, its context
// menu, the palette): the host asks how — how many, the prompt on a reply, a model or agent per
// way — and the ways start. No editor (tests, a host without the hook): two ways of the
// conversation's model. Cancelled: nothing is made.

export async function tryWays(h: Harness, hooks: ControllerHooks, sessionId: string, seq: number): Promise<{ group?: string; ways: string[] }> {
  const at = (await h.readSession(sessionId)).events[seq];
  const needsPrompt = !(at?.type === 'user/message' && at.source.kind === 'user');
  const ask = { needsPrompt, model: h.config.model.name, agents: h.project.agentNames() };
  const picked = hooks.pickWays ? await hooks.pickWays(ask) : { ways: [{}, {}] };
  if (!picked) return { ways: [] };
  return h.bestOf.start(sessionId, seq, picked);
}
