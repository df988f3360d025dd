import type { HandlerContext, RequestHandlers } from './context';

type GoalRequest = 'goal/set' | 'goal/start' | 'goal/pause' | 'goal/resume' | 'goal/clear' | 'goal/limit';

/** The goal bar's requests: set, start a conversation with a goal, pause, resume, clear, limit (decision 0029). */
export function goalRequests(c: HandlerContext): Pick<RequestHandlers, GoalRequest> {
  return {
    'goal/set': async (_port, m) => {
      await c.goals.set(m.sessionId, m.objective, m.maxRounds);
      return { sessionId: m.sessionId };
    },
    'goal/start': async (port, m) => {
      const h = await c.ensure();
      const id = (await h.createSession({ title: m.objective.slice(0, 80) })).id;
      c.select(port, id);
      await c.goals.set(id, m.objective, m.maxRounds);
      return { sessionId: id };
    },
    'goal/pause': async (_port, m) => {
      await c.goals.pause(m.sessionId);
      return { sessionId: m.sessionId };
    },
    'goal/resume': async (_port, m) => {
      await c.goals.resume(m.sessionId);
      return { sessionId: m.sessionId };
    },
    'goal/clear': async (_port, m) => {
      await c.goals.clear(m.sessionId);
      return { sessionId: m.sessionId };
    },
    'goal/limit': async (_port, m) => {
      await c.goals.limit(m.sessionId, m.maxRounds);
      return { sessionId: m.sessionId };
    },
  };
}
