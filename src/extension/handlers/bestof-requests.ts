import type { WaysView } from '../../protocol';
import type { HandlerContext, RequestHandlers } from './context';

type BestOfRequest = 'bestof/start' | 'bestof/view' | 'bestof/choose' | 'bestof/discard-others';

/** "Try N ways…" (decision 0061): start the ways (the host asks how), the comparison, apply one, discard the others. */
export function bestOfRequests(c: HandlerContext): Pick<RequestHandlers, BestOfRequest> {
  return {
    'bestof/start': (port, m) => c.tryWays(m.sessionId, m.seq, port),
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
