// The webview's whole state and the user's intents. Host messages are handled one
// function per `type` (a mapped type makes a missing handler a compile error); intents
// post typed messages, and requests remember their id so `request/done` errors can be
// shown in words next to what failed.
import type { ApprovalPrompt, GrantView, HostCommand, HostToWebview, PanelSettings } from '../../../src/protocol';
import { isActive } from '../lib/format';
import { loadState, post, requestId, saveState, type ViewState } from '../vscode';
import { ChatState } from './chat.svelte';
import { TreeState } from './tree.svelte';

export type View = 'panel' | 'transcript';

type Handlers = {
  [K in HostToWebview['type']]: (msg: Extract<HostToWebview, { type: K }>) => void;
};

interface Pending {
  /** What the user asked for, in words: "Sending your message". */
  what: string;
  /** Put back in the input if sending failed and the input is still empty. */
  text?: string;
}

export interface Problem {
  id: string;
  text: string;
}

export class AppState {
  readonly view: View;
  /** The transcript tab's session (fixed for the tab's life). */
  readonly fixedSession: string | undefined;
  /** What the view saved before it was last hidden. */
  readonly saved: ViewState = loadState();

  tree = new TreeState(this.saved.collapsed ?? []);
  chat = new ChatState();
  settings: PanelSettings | undefined = $state.raw();
  approvals: ApprovalPrompt[] = $state.raw([]);
  /** Approvals the user answered, until the host confirms (buttons stay disabled). */
  answering: ReadonlySet<string> = $state.raw(new Set());
  /** Active "allow for this conversation" grants of the sessions this view was sent. */
  grants: ReadonlyMap<string, GrantView[]> = $state.raw(new Map());
  selected: string | undefined = $state();
  problems: Problem[] = $state.raw([]);
  draft = $state('');
  /** The snapshot has arrived. */
  ready = $state(false);
  /** Bumped by `input/focus`: the composer takes the keyboard focus. */
  focusRequests = $state(0);

  #pending = new Map<string, Pending>();
  #chatRestore: ViewState['chat'];

  readonly selectedNode = $derived(this.tree.get(this.selected));
  readonly running = $derived(isActive(this.selectedNode?.status));
  readonly readOnly = $derived(this.settings?.restricted === true);

  constructor(view: View, fixedSession: string | undefined) {
    this.view = view;
    this.fixedSession = view === 'transcript' ? fixedSession : undefined;
    this.draft = this.saved.draft ?? '';
    this.#chatRestore = this.saved.chat;
    if (this.fixedSession) {
      this.selected = this.fixedSession;
      this.chat.show(this.fixedSession);
      // VS Code hands this state to the extension's serializer when it restores the tab.
      if (this.saved.sessionId !== this.fixedSession) saveState({ sessionId: this.fixedSession });
    }
  }

  /** Mounted and listening: ask for the snapshot. */
  announce(): void {
    post({ type: 'webview/ready', view: this.view, ...(this.fixedSession ? { sessionId: this.fixedSession } : {}) });
  }

  receive(msg: HostToWebview): void {
    const handler = this.#handlers[msg.type] as (m: HostToWebview) => void;
    handler?.(msg);
  }

  #handlers: Handlers = {
    'state/snapshot': (m) => {
      this.tree.reset(m.nodes);
      this.settings = m.settings;
      this.approvals = m.approvals;
      this.answering = new Set();
      this.ready = true;
      if (this.view === 'transcript') return;
      // The host's selection wins (it may have changed while the view was hidden); without
      // one, the selection saved in the view state is restored and told to the host.
      if (m.selected !== undefined) this.#showSelected(m.selected);
      else if (this.saved.selected !== undefined && this.tree.has(this.saved.selected)) this.select(this.saved.selected);
      else if (this.selected !== undefined && !this.tree.has(this.selected)) this.#showSelected(undefined);
    },
    'tree/node': (m) => this.tree.upsert(m.node),
    'tree/removed': (m) => {
      this.tree.remove(m.id);
      if (m.id === this.selected && this.view === 'panel') this.#showSelected(undefined);
    },
    'transcript/reset': (m) => this.chat.reset(m.sessionId, m.entries, m.hasMore, m.partial),
    'transcript/page': (m) => this.chat.page(m.sessionId, m.id, m.entries, m.hasMore),
    'transcript/append': (m) => this.chat.append(m.sessionId, m.entries),
    'stream/delta': (m) => this.chat.delta(m.sessionId, m.kind, m.delta),
    'settings/changed': (m) => {
      this.settings = m.settings;
    },
    'approval/requested': (m) => {
      if (this.approvals.some((a) => a.requestId === m.prompt.requestId)) return;
      this.approvals = [...this.approvals, m.prompt];
    },
    'approval/resolved': (m) => {
      this.approvals = this.approvals.filter((a) => a.requestId !== m.requestId);
      if (this.answering.has(m.requestId)) {
        const next = new Set(this.answering);
        next.delete(m.requestId);
        this.answering = next;
      }
    },
    'grants/list': (m) => {
      this.grants = new Map(this.grants).set(m.sessionId, m.grants);
    },
    'input/focus': () => {
      this.focusRequests++;
    },
    'draft/start': () => {
      if (this.view !== 'panel') return;
      this.#showSelected(undefined);
      this.focusRequests++;
    },
    'session/selected': (m) => {
      if (this.view === 'panel') this.#showSelected(m.sessionId);
    },
    'request/done': (m) => {
      const pending = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      if (m.id === this.chat.pageRequest) {
        if (!m.ok) {
          this.chat.pageRequest = undefined;
          this.chat.pageError = `Couldn't load earlier messages: ${m.error}`;
        }
        return;
      }
      if (m.ok) return;
      this.report(m.id, `${pending?.what ?? 'The request'} failed: ${m.error}`);
      if (pending?.text !== undefined && this.draft.trim() === '') this.setDraft(pending.text);
    },
    'queue/changed': (m) => this.chat.setQueue(m.sessionId, m.state, m.messages),
    'message/rejected': (m) => {
      this.report(requestId(), `The extension refused a message from this view (${m.detail}).`);
    },
  };

  /** Where the chat was scrolled before the view was hidden: given out once, for that session only. */
  takeChatRestore(sessionId: string): ViewState['chat'] {
    const r = this.#chatRestore;
    this.#chatRestore = undefined;
    return r?.sessionId === sessionId ? r : undefined;
  }

  // ── intents ────────────────────────────────────────────────────────────────

  select(id: string): void {
    if (this.view !== 'panel' || id === this.selected) return;
    this.#showSelected(id);
    post({ type: 'session/select', sessionId: id });
  }

  #showSelected(id: string | undefined): void {
    this.selected = id;
    this.chat.show(id);
    if (id !== undefined) this.tree.reveal(id);
    saveState({ selected: id });
  }

  /** The session the chat talks to: the tab's session, or the selected node. */
  get target(): string | undefined {
    return this.fixedSession ?? this.selected;
  }

  send(): boolean {
    const text = this.draft.trim();
    if (text === '') return false;
    const id = requestId();
    const sessionId = this.target;
    this.#pending.set(id, { what: sessionId ? 'Sending your message' : 'Starting a new conversation', text: this.draft });
    post({ type: 'chat/send', id, text, ...(sessionId ? { sessionId } : {}) });
    this.setDraft('');
    return true;
  }

  interrupt(sessionId = this.target): void {
    if (sessionId === undefined) return;
    const id = requestId();
    this.#pending.set(id, { what: 'Stopping the session' });
    post({ type: 'agent/interrupt', id, sessionId });
  }

  /** "Cancel workflow" on a run's node. */
  cancelWorkflow(runId: string): void {
    const id = requestId();
    this.#pending.set(id, { what: 'Cancelling the workflow' });
    post({ type: 'workflow/cancel', id, runId });
  }

  fork(sessionId: string, seq: number): void {
    if (this.readOnly) return;
    const id = requestId();
    this.#pending.set(id, { what: 'Forking the conversation' });
    post({ type: 'session/fork', id, sessionId, seq });
  }

  newConversation(): void {
    if (this.readOnly) return;
    // Nothing is stored until the first message; the host only forgets its selection.
    this.#showSelected(undefined);
    const id = requestId();
    this.#pending.set(id, { what: 'Starting a new conversation' });
    post({ type: 'session/new', id });
  }

  /** Cancel a queued message of the shown session before it runs. */
  withdraw(messageId: string): void {
    const sessionId = this.target;
    if (sessionId === undefined) return;
    const id = requestId();
    this.#pending.set(id, { what: 'Cancelling the queued message' });
    post({ type: 'queue/withdraw', id, sessionId, messageId });
  }

  /** "Send now": the waiting messages run, oldest first. */
  runQueue(): void {
    const sessionId = this.target;
    if (sessionId === undefined) return;
    const id = requestId();
    this.#pending.set(id, { what: 'Sending the waiting messages' });
    post({ type: 'queue/run', id, sessionId });
  }

  /** The goal bar's actions on the shown conversation (human actions: resume arms the goal). */
  goal(action: 'pause' | 'resume' | 'clear' | 'limit', maxRounds?: number): void {
    const sessionId = this.target;
    if (sessionId === undefined || this.readOnly) return;
    const id = requestId();
    this.#pending.set(id, { what: action === 'limit' ? 'Raising the round limit' : `${action[0].toUpperCase()}${action.slice(1)} the goal` });
    if (action === 'limit') post({ type: 'goal/limit', id, sessionId, maxRounds: maxRounds ?? 0 });
    else post({ type: `goal/${action}`, id, sessionId });
  }

  /** The sandbox / approval picker, for the session the chat talks to. */
  pickPolicy(): void {
    const sessionId = this.target;
    post({ type: 'policy/pick', ...(sessionId ? { sessionId } : {}) });
  }

  /** "Set Budget" on a node (the budget bar, the budget stop's button): the host asks for the amount. */
  pickBudget(sessionId = this.target): void {
    if (sessionId === undefined || this.readOnly) return;
    post({ type: 'budget/pick', sessionId });
  }

  /** An example prompt from the empty panel: sent as a new conversation. */
  sendExample(text: string): void {
    if (this.readOnly) return;
    this.#showSelected(undefined);
    this.setDraft(text);
    this.send();
  }

  openTranscript(sessionId: string): void {
    post({ type: 'transcript/open', sessionId });
  }

  loadEarlier(): void {
    const { sessionId, entries, hasMore, pageRequest } = this.chat;
    if (!sessionId || !hasMore || pageRequest !== undefined || entries.length === 0) return;
    const id = requestId();
    this.chat.pageRequest = id;
    this.chat.pageError = undefined;
    post({ type: 'transcript/more', id, sessionId, beforeSeq: entries[0].seq });
  }

  /** `remember`: allow for this conversation; `reason`: why not, for the agent. */
  answer(requestId: string, decision: 'allow' | 'deny', opts: { remember?: boolean; reason?: string } = {}): void {
    if (this.answering.has(requestId)) return;
    this.answering = new Set(this.answering).add(requestId);
    const reason = opts.reason?.trim();
    post({ type: 'approval/answer', requestId, decision, ...(opts.remember ? { remember: true } : {}), ...(reason ? { reason } : {}) });
  }

  revokeGrant(sessionId: string, grantId: string): void {
    const id = requestId();
    this.#pending.set(id, { what: 'Revoking the permission' });
    post({ type: 'approval/revoke', id, sessionId, grantId });
  }

  /** Send the failed turn ending at `seq` again. */
  retry(sessionId: string, seq: number): void {
    const id = requestId();
    this.#pending.set(id, { what: 'Retrying' });
    post({ type: 'chat/retry', id, sessionId, seq });
  }

  runCommand(command: HostCommand): void {
    post({ type: 'command/run', command });
  }

  setDraft(text: string): void {
    this.draft = text;
    saveState({ draft: text });
  }

  report(id: string, text: string): void {
    // The newest few are enough; an error storm must not fill the panel.
    this.problems = [...this.problems.filter((p) => p.text !== text), { id, text }].slice(-3);
  }

  dismiss(id: string): void {
    this.problems = this.problems.filter((p) => p.id !== id);
  }
}
