import { retryText } from '../presenter/retry';
import type { HandlerContext, RequestHandlers } from './context';

type SessionRequest = Exclude<keyof RequestHandlers, `goal/${string}` | `rewind/${string}` | `worktree/${string}` | `bestof/${string}` | `placement/${string}`>;

/** The conversation requests: new, send, stop, fork, page, retry, grants, queue, budget, start an agent, cancel a run. */
export function sessionRequests(c: HandlerContext): Pick<RequestHandlers, SessionRequest> {
  return {
    'session/new': async (port) => {
      // Lazily: an empty conversation is never stored; `chat/send` without a session creates it.
      if (port.view === 'panel') c.newDraft();
      return {};
    },
    'chat/send': async (port, m) => {
      const h = await c.ensure();
      let id = m.sessionId;
      if (!id) {
        id = (await h.createSession({ title: m.text.slice(0, 80) })).id;
        c.select(port, id);
      }
      const target = id;
      const cold = !h.resident(target) && (await h.isSubagent(target));
      await (cold ? c.hooks.progress(`Resuming ${await c.nameOf(target)}…`, () => h.send(target, m.text)) : h.send(target, m.text));
      return { sessionId: target };
    },
    'agent/interrupt': async (_port, m) => {
      await c.interrupt(m.sessionId);
      return { sessionId: m.sessionId };
    },
    'workflow/cancel': async (_port, m) => {
      await c.cancelWorkflow(m.runId);
      return {};
    },
    'session/fork': async (port, m) => ({ sessionId: await c.forkAndShow(m.sessionId, m.seq, port.view) }),
    'transcript/more': async (_port, m) => ({ sessionId: m.sessionId, ...(await c.feed.older(m.sessionId, m.beforeSeq)) }),
    'chat/retry': async (_port, m) => {
      await c.send(m.sessionId, retryText(await c.events(m.sessionId), m.seq));
      return { sessionId: m.sessionId };
    },
    'approval/revoke': async (_port, m) => {
      await (await c.ensure()).revokeGrant(m.sessionId, m.grantId);
      // A session that is not resident appended through a writer of its own (no event reaches us).
      await c.feed.grants(m.sessionId);
      return { sessionId: m.sessionId };
    },
    'queue/withdraw': async (_port, m) => {
      await (await c.ensure()).withdraw(m.sessionId, m.messageId);
      // A session not resident was written through a writer of its own: no event reaches us.
      await c.feed.queue(m.sessionId);
      return { sessionId: m.sessionId };
    },
    'queue/run': async (_port, m) => {
      await (await c.ensure()).runQueue(m.sessionId);
      await c.feed.queue(m.sessionId);
      return { sessionId: m.sessionId };
    },
    'budget/set': async (_port, m) => {
      await c.setBudget(m.sessionId, m.budget);
      return { sessionId: m.sessionId };
    },
    'agent/start': async (port, m) => ({ sessionId: await c.startAgent(m.agent, port) }),
  };
}
