import { isRunNodeId } from '../../protocol';
import type { HandlerContext, NoticeHandlers } from './context';

/** The handlers of the webview messages that expect no answer: ready, select, pickers, commands, approval answers. */
export function noticeHandlers(c: HandlerContext): NoticeHandlers {
  return {
    'webview/ready': async (port, m) => {
      const h = await c.ensure();
      let selection: number | undefined;
      if (m.view === 'transcript') port.sessionId = m.sessionId;
      else selection = c.adopt(port);
      port.post({
        type: 'state/snapshot',
        nodes: c.nodes(),
        ...(port.sessionId ? { selected: port.sessionId } : {}),
        ...(selection !== undefined ? { selection } : {}),
        settings: c.hooks.settings(),
        approvals: c.approvals(),
      });
      if (port.view === 'panel') port.post(c.mcpServers());
      port.post(c.projectFiles(h));
      // A crash left worktrees nothing owns: the panel offers to clean them (never on its own).
      // Last: finding them asks git (a process), and nothing above waits for it.
      if (port.view === 'panel') port.post(await c.worktreeOrphans(h));
      if (port.sessionId && isRunNodeId(port.sessionId)) {
        // A run's parent is known once the stored summaries are folded (after a reload too).
        await c.folded();
        await c.runFeed.reset(port, port.sessionId);
      } else if (port.sessionId && h.store.has(port.sessionId)) await c.feed.reset(port, port.sessionId);
    },
    'session/select': async (port, m) => {
      // Followed on arrival, before any await (decision 0120): a message the panel sent after
      // this one, composed on this selection, is judged against it, however long the harness
      // takes to open. Said back with its number, so the panel, whatever crossed, ends on it.
      if (!c.follow(port, m.sessionId, m.selection, m.restored === true)) return;
      const h = await c.ensure();
      if (!h.store.has(m.sessionId)) {
        // Gone meanwhile (deleted in another window): the panel is not left on a session it is sent nothing of.
        if (port.view === 'panel' && port.sessionId === m.sessionId) c.newDraft();
        throw new Error(`No session ${m.sessionId}.`);
      }
      if (port.view !== 'panel') port.sessionId = m.sessionId;
      if (port.sessionId === m.sessionId) await c.feed.reset(port, m.sessionId);
    },
    'policy/pick': (_port, m) => c.hooks.pickPolicy?.(m.sessionId),
    'budget/pick': (_port, m) => c.hooks.pickBudget?.(m.sessionId),
    // A tab (a webview of its own) per id asked for: only for a node that exists, so a view cannot open blank tabs by the thousand.
    'transcript/open': async (_port, m) => {
      const h = await c.ensure();
      if (isRunNodeId(m.sessionId)) await c.folded();
      if (!h.store.has(m.sessionId) && !c.shows(m.sessionId)) throw new Error(`No session ${m.sessionId}; no transcript tab was opened.`);
      c.hooks.openTranscript(m.sessionId);
    },
    'command/run': async (_port, m) => {
      if (!c.hooks.runCommand) throw new Error(`Command ${m.command} is not available here.`);
      await c.hooks.runCommand(m.command);
    },
    'approval/answer': (_port, m) => {
      // false: already answered (another view, a notification, or the turn was cancelled)
      c.answer(m.requestId, { decision: m.decision, ...(m.remember ? { remember: true } : {}), ...(m.reason ? { reason: m.reason } : {}) });
    },
  };
}
