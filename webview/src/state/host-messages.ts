// How each host message changes a view's state: one function per `HostToWebview` type (a
// mapped type makes a missing handler a compile error), applied through `AppState`'s own
// fields and methods; `AppState.receive` runs them.
import type { HostToWebview } from '../../../src/protocol';
import { hintFor } from '../lib/error-hints';
import { requestId, settleRequest } from '../vscode';
import type { AppState } from './app.svelte';

export type HostMessageHandlers = {
  [K in HostToWebview['type']]: (msg: Extract<HostToWebview, { type: K }>) => void;
};

/** `showSelected`: show a session (or none) in the chat without telling the host, which chose it. */
export function hostMessageHandlers(app: AppState, showSelected: (id: string | undefined) => void): HostMessageHandlers {
  return {
    'state/snapshot': (m) => {
      app.tree.reset(m.nodes);
      app.settings = m.settings;
      app.approvals = m.approvals;
      app.answering = new Set();
      app.ready = true;
      if (app.view === 'transcript') return;
      // A selection the host numbered after this snapshot was already adopted: it stands.
      if ((m.selection ?? 0) < app.selection) return;
      app.selection = m.selection ?? 0;
      // The host's selection wins (it may have changed while the view was hidden); without
      // one, the selection saved in the view state is restored and told to the host, which
      // drops it if it selected anything since (a conversation the user started meanwhile).
      if (m.selected !== undefined) showSelected(m.selected);
      else if (app.saved.selected !== undefined && app.tree.has(app.saved.selected)) app.restoreSelection(app.saved.selected);
      else if (app.selected !== undefined && !app.tree.has(app.selected)) showSelected(undefined);
    },
    'tree/node': (m) => app.tree.upsert(m.node),
    'tree/removed': (m) => {
      app.tree.remove(m.id);
      if (m.id === app.selected && app.view === 'panel') showSelected(undefined);
    },
    'transcript/reset': (m) => app.chat.reset(m.sessionId, m.entries, m.hasMore, m.partial),
    'transcript/append': (m) => app.chat.append(m.sessionId, m.entries),
    'stream/delta': (m) => app.chat.delta(m.sessionId, m.kind, m.delta),
    'settings/changed': (m) => {
      app.settings = m.settings;
    },
    'approval/requested': (m) => {
      if (app.approvals.some((a) => a.requestId === m.prompt.requestId)) return;
      app.approvals = [...app.approvals, m.prompt];
    },
    'approval/resolved': (m) => {
      app.approvals = app.approvals.filter((a) => a.requestId !== m.requestId);
      if (app.answering.has(m.requestId)) {
        const next = new Set(app.answering);
        next.delete(m.requestId);
        app.answering = next;
      }
    },
    'grants/list': (m) => {
      app.grants = new Map(app.grants).set(m.sessionId, m.grants);
    },
    'mcp/servers': (m) => {
      app.mcpServers = m.servers;
    },
    'input/focus': () => {
      app.focusRequests++;
    },
    // A selection of the host's is adopted only when its number is newer than this panel's
    // (decision 0120): an older one crossed a later choice, which the host also numbered.
    'draft/start': (m) => {
      if (app.view !== 'panel' || m.selection <= app.selection) return;
      app.selection = m.selection;
      showSelected(undefined);
      app.focusRequests++;
    },
    'session/selected': (m) => {
      if (app.view !== 'panel' || m.selection <= app.selection) return;
      app.selection = m.selection;
      showSelected(m.sessionId);
    },
    'request/done': (m) => {
      // Answers to requests of this page settle their promise; any other failure is still said.
      if (!settleRequest(m) && !m.ok) app.report(m.id, `The request failed: ${m.error}`, hintFor(m.code));
    },
    'queue/changed': (m) => app.chat.setQueue(m.sessionId, m.state, m.messages),
    'rewind/open': (m) => {
      if (m.sessionId === app.chat.sessionId && !app.readOnly) app.rewind.open(m.sessionId, m.seq);
    },
    'workflow/view': (m) => {
      if (m.nodeId !== app.fixedSession) return;
      app.run = m.view ?? undefined;
      app.runProblem = m.view ? undefined : m.problem;
    },
    'project/files': (m) => {
      app.project = m.files;
    },
    'worktree/orphans': (m) => {
      app.worktreeOrphans = m.orphans;
    },
    'message/rejected': (m) => {
      app.report(requestId(), `The extension refused a message from this view (${m.detail}).`);
    },
  };
}
