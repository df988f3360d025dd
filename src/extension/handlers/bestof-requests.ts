import type { WaysView } from '../../protocol';
import type { HandlerContext, RequestHandlers } from './context';

type BestOfRequest = 'bestof/start' | 'bestof/view' | 'bestof/choose' | 'bestof/discard-others';

/** "Try N ways…" (decision 0061): start the ways (the host asks how), the comparison, apply one, discard the others. */
export function bestOfRequests(c: HandlerContext): Pick<RequestHandlers, BestOfRequest> {
  return {
    'bestof/start': async (port, m) => {
      const h = await c.ensure();
      const at = (await h.readSession(m.sessionId)).events[m.seq];
      const needsPrompt = !(at?.type === 'user/message' && at.source.kind === 'user');
      const ask = { needsPrompt, model: h.config.model.name, agents: h.project.agentNames() };
      const picked = c.hooks.pickWays ? await c.hooks.pickWays(ask) : { ways: [{}, {}] };
      if (!picked) return { ways: [] };
      const { group, ways } = await h.bestOf.start(m.sessionId, m.seq, picked);
      c.select(port, ways[0]);
      return { group, ways };
    },
    'bestof/view': async (_port, m) => {
      const v = await (await c.ensure()).bestOf.view(m.group);
      const out: WaysView = { group: v.group, source: v.source, prompt: v.prompt, ways: v.ways, settled: v.settled, ...(v.chosen ? { chosen: v.chosen } : {}) };
      return out;
    },
    'bestof/choose': async (_port, m) => {
      const r = await (await c.ensure()).bestOf.choose(m.group, m.sessionId);
      return r.applied ? { applied: true, files: r.files, conflicts: [] } : { applied: false, files: [], conflicts: r.conflicts };
    },
    'bestof/discard-others': async (_port, m) => ({ discarded: (await (await c.ensure()).bestOf.discardOthers(m.group, m.sessionId)).length }),
  };
}
