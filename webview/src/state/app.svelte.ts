// The webview's whole state and the user's intents. Host messages are handled one
// function per `type` (`host-messages.ts`; a mapped type makes a missing handler a compile
// error); intents post typed messages; requests (`request()`) get their typed answer, and a
// failure is shown in words next to what failed, with what to do when its code says.
import {
  type ApprovalPrompt,
  type ExamplePrompt,
  type GrantView,
  type HostCommand,
  type HostToWebview,
  isRunNodeId,
  type McpServerView,
  type PanelSettings,
  type ProjectFilesView,
  type RequestBody,
  type RequestResults,
  type RequestType,
  type WorkflowRunView,
  type WorktreeConflictView,
  type WorktreeOrphanView,
} from '../../../src/protocol';
import { type ClosedTarget, closedTarget } from '../lib/closed-target';
import { hintFor } from '../lib/error-hints';
import { isActive, nodeName } from '../lib/format';
import { namesForIds } from '../lib/names-in-text';
import type { RequestError } from '../lib/requests';
import { loadState, post, request, saveState, type ViewState } from '../vscode';
import { ChatState } from './chat.svelte';
import { hostMessageHandlers } from './host-messages';
import { RewindFlow } from './rewind.svelte';
import { TreeState } from './tree.svelte';

export type View = 'panel' | 'transcript';

export interface Problem {
  id: string;
  text: string;
  /** What to do about it, when the error's code says (lib/error-hints). */
  hint?: string;
}

export class AppState {
  readonly view: View;
  /** The transcript tab's session (fixed for the tab's life). */
  readonly fixedSession: string | undefined;
  /** What the view saved before it was last hidden. */
  readonly saved: ViewState = loadState();

  tree = new TreeState(this.saved.collapsed ?? []);
  chat = new ChatState();
  /** "Rewind…" from a message: its steps, preview and result (decision 0059). */
  // The flow asks through this view's one request path (failures reported in names); the generic passes through unchanged.
  readonly rewind = new RewindFlow(
    (body, what) => this.#ask(body as never, what) as never,
    () => this.#composed,
  );
  settings: PanelSettings | undefined = $state.raw();
  approvals: ApprovalPrompt[] = $state.raw([]);
  /** Approvals the user answered, until the host confirms (buttons stay disabled). */
  answering: ReadonlySet<string> = $state.raw(new Set());
  /** Active "allow for this conversation" grants of the sessions this view was sent. */
  grants: ReadonlyMap<string, GrantView[]> = $state.raw(new Map());
  /** The MCP servers and their state (decision 0055). */
  mcpServers: McpServerView[] = $state.raw([]);
  /** Per worktree child, the conflicts of its last refused apply (nothing was changed); cleared by its next action. */
  worktreeConflicts: ReadonlyMap<string, WorktreeConflictView[]> = $state.raw(new Map());
  /** Worktrees a crash left that nothing owns (decision 0060): the notice offers to clean them. */
  worktreeOrphans: WorktreeOrphanView[] = $state.raw([]);
  selected: string | undefined = $state();
  problems: Problem[] = $state.raw([]);
  draft = $state('');
  /** The snapshot has arrived. */
  ready = $state(false);
  /**
   * The host's number of the selection this panel last adopted (decision 0120): a message composed
   * against the selection carries it (the host refuses it once the selection moved elsewhere); a
   * host selection is adopted only when its number is newer. Only the host gives numbers.
   */
  selection = 0;
  /** Bumped by `input/focus`: the composer takes the keyboard focus. */
  focusRequests = $state(0);
  /** A workflow run's tab: the run as its parent's log tells it, or why it cannot be shown. */
  run: WorkflowRunView | undefined = $state.raw();
  runProblem: string | undefined = $state();
  /** The instruction files in effect and the agents defined in files (decision 0056). */
  project: ProjectFilesView | undefined = $state.raw();

  #chatRestore: ViewState['chat'];

  readonly selectedNode = $derived(this.tree.get(this.selected));
  readonly running = $derived(isActive(this.selectedNode?.status));
  readonly readOnly = $derived(this.settings?.restricted === true);
  /** The shown session takes no messages (one-shot, mirrored): why, and where to go instead. */
  readonly closed: ClosedTarget | undefined = $derived.by(() => closedTarget(this.tree.get(this.target), (id) => this.tree.get(id)));

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

  /** One function per host message type (`host-messages.ts`). */
  #handlers = hostMessageHandlers(this, (id) => this.#showSelected(id));

  /** Where the chat was scrolled before the view was hidden: given out once, for that session only. */
  takeChatRestore(sessionId: string): ViewState['chat'] {
    const r = this.#chatRestore;
    this.#chatRestore = undefined;
    return r?.sessionId === sessionId ? r : undefined;
  }

  // ── intents ────────────────────────────────────────────────────────────────

  /** The tab shows a workflow run (`wf.<runId>`), not a conversation. */
  get showsRun(): boolean {
    return this.fixedSession !== undefined && isRunNodeId(this.fixedSession);
  }

  select(id: string): void {
    // A workflow run has no conversation to show in the chat: its view is its own tab.
    if (isRunNodeId(id)) return this.openTranscript(id);
    if (this.view !== 'panel' || id === this.selected) return;
    this.#showSelected(id);
    post({ type: 'session/select', sessionId: id, selection: this.selection });
  }

  /** After a reload: the selection saved before, shown and asked for; the host drops it if it selected anything since. */
  restoreSelection(id: string): void {
    this.#showSelected(id);
    post({ type: 'session/select', sessionId: id, selection: this.selection, restored: true });
  }

  /** What a message composed against the panel's selection carries: the selection's number. */
  get #composed(): { selection?: number } {
    return this.view === 'panel' ? { selection: this.selection } : {};
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
    if (text === '' || this.closed) return false;
    const sessionId = this.target;
    const body = { type: 'chat/send', text, ...(sessionId ? { sessionId } : {}), ...this.#composed } as const;
    this.#ask(body, sessionId ? 'Sending your message' : 'Starting a new conversation', this.draft);
    this.setDraft('');
    return true;
  }

  /**
   * "Message the parent" on a session that takes no messages: the nearest session above it
   * that does is shown and its composer takes the focus (what was typed stays in the input).
   */
  messageParent(): void {
    const id = this.closed?.parentId;
    if (id === undefined) return;
    if (this.view !== 'panel') {
      this.openTranscript(id);
      return;
    }
    this.select(id);
    this.focusRequests++;
  }

  /** Stop a node's turn (its menu), or, without one, the shown session's (composed against the selection). */
  interrupt(node?: string): void {
    const sessionId = node ?? this.target;
    if (sessionId === undefined) return;
    this.#ask({ type: 'agent/interrupt', sessionId, ...(node === undefined ? this.#composed : {}) }, 'Stopping the session');
  }

  /** "Cancel workflow" on a run's node. */
  cancelWorkflow(runId: string): void {
    this.#ask({ type: 'workflow/cancel', runId }, 'Cancelling the workflow');
  }

  fork(sessionId: string, seq: number): void {
    if (this.readOnly) return;
    this.#ask({ type: 'session/fork', sessionId, seq, ...this.#composed }, 'Forking the conversation');
  }

  newConversation(): void {
    if (this.readOnly) return;
    // Nothing is stored until the first message; the host only forgets its selection.
    this.#showSelected(undefined);
    this.#ask({ type: 'session/new' }, 'Starting a new conversation');
  }

  /** Cancel a queued message of the shown session before it runs. */
  withdraw(messageId: string): void {
    const sessionId = this.target;
    if (sessionId === undefined) return;
    this.#ask({ type: 'queue/withdraw', sessionId, messageId, ...this.#composed }, 'Cancelling the queued message');
  }

  /** "Send now": the waiting messages run, oldest first. */
  runQueue(): void {
    const sessionId = this.target;
    if (sessionId === undefined) return;
    this.#ask({ type: 'queue/run', sessionId, ...this.#composed }, 'Sending the waiting messages');
  }

  /** The goal bar's actions on the shown conversation (human actions: resume arms the goal). */
  goal(action: 'pause' | 'resume' | 'clear' | 'limit', maxRounds?: number): void {
    const sessionId = this.target;
    if (sessionId === undefined || this.readOnly) return;
    const what = action === 'limit' ? 'Raising the round limit' : `${action[0].toUpperCase()}${action.slice(1)} the goal`;
    if (action === 'limit') this.#ask({ type: 'goal/limit', sessionId, maxRounds: maxRounds ?? 0, ...this.#composed }, what);
    else this.#ask({ type: `goal/${action}`, sessionId, ...this.#composed }, what);
  }

  /** "Try N ways…" on a message (decision 0061): the host asks how many ways and how each runs. */
  tryWays(sessionId: string, seq: number): void {
    if (this.readOnly) return;
    this.#ask({ type: 'bestof/start', sessionId, seq }, 'Trying several ways');
  }

  /** The ways' comparison (decision 0061): read it, apply one way, discard the others; failures reported like every request. */
  waysView(group: string): Promise<RequestResults['bestof/view'] | undefined> {
    return this.#ask({ type: 'bestof/view', group }, 'Comparing the ways');
  }
  waysChoose(group: string, sessionId: string): Promise<RequestResults['bestof/choose'] | undefined> {
    return this.#ask({ type: 'bestof/choose', group, sessionId }, 'Applying this way');
  }
  waysDiscardOthers(group: string, keep: string): Promise<RequestResults['bestof/discard-others'] | undefined> {
    return this.#ask({ type: 'bestof/discard-others', group, sessionId: keep }, 'Discarding the other ways');
  }

  /**
   * The worktree bar's actions on a worktree child (decision 0060); an apply's conflicts are kept
   * to show. Without `node` (a way of a comparison): the shown session's, composed against the selection.
   */
  async worktree(action: 'review' | 'apply' | 'discard' | 'keep', node?: string): Promise<void> {
    const sessionId = node ?? this.target;
    if (sessionId === undefined || (this.readOnly && action !== 'review')) return;
    const composed = node === undefined ? this.#composed : {};
    const conflicts = new Map(this.worktreeConflicts);
    conflicts.delete(sessionId);
    this.worktreeConflicts = conflicts;
    if (action === 'review') await this.#ask({ type: 'worktree/review', sessionId, ...composed }, 'Opening its changes');
    else if (action === 'discard') await this.#ask({ type: 'worktree/discard', sessionId, ...composed }, 'Discarding its worktree');
    else if (action === 'keep') await this.#ask({ type: 'worktree/keep', sessionId, ...composed }, 'Keeping its branch');
    else {
      const r = await this.#ask({ type: 'worktree/apply', sessionId, ...composed }, 'Applying its changes');
      if (r && !r.applied) this.worktreeConflicts = new Map(this.worktreeConflicts).set(sessionId, r.conflicts);
    }
  }

  /** "Clean up" on the orphaned-worktrees notice: the host removes them and sends the list again. */
  cleanWorktrees(): void {
    if (this.readOnly) return;
    void this.#ask({ type: 'worktree/clean' }, 'Removing the left-over worktrees');
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

  /** An example prompt from the empty panel: sent as a new conversation, or set as a new conversation's goal (armed). */
  sendExample(example: ExamplePrompt): void {
    if (this.readOnly) return;
    this.#showSelected(undefined);
    if (example.goalRounds !== undefined) {
      this.#ask({ type: 'goal/start', objective: example.text, maxRounds: example.goalRounds }, 'Starting a conversation with this goal');
      return;
    }
    this.setDraft(example.text);
    this.send();
  }

  /** A new conversation with an agent defined in a file: the host creates and selects it; the input takes the focus. */
  startAgent(agent: string): void {
    if (this.readOnly || this.view !== 'panel') return;
    void this.#ask({ type: 'agent/start', agent }, `Starting a conversation with ${agent}`).then((r) => {
      if (r) this.focusRequests++;
    });
  }

  openTranscript(sessionId: string): void {
    post({ type: 'transcript/open', sessionId });
  }

  loadEarlier(): void {
    const { sessionId, entries, hasMore, pageRequest } = this.chat;
    if (!sessionId || !hasMore || pageRequest !== undefined || entries.length === 0) return;
    const { id, answer } = request({ type: 'transcript/more', sessionId, beforeSeq: entries[0].seq });
    this.chat.pageRequest = id;
    this.chat.pageError = undefined;
    answer.then(
      (page) => this.chat.page(page.sessionId, id, page.entries, page.hasMore),
      (err: RequestError) => {
        if (this.chat.pageRequest !== id) return;
        this.chat.pageRequest = undefined;
        this.chat.pageError = `Couldn't load earlier messages: ${err.message}`;
      },
    );
  }

  /** `remember`: allow for this conversation; `reason`: why not, for the agent. */
  answer(requestId: string, decision: 'allow' | 'deny', opts: { remember?: boolean; reason?: string } = {}): void {
    if (this.answering.has(requestId)) return;
    this.answering = new Set(this.answering).add(requestId);
    const reason = opts.reason?.trim();
    post({ type: 'approval/answer', requestId, decision, ...(opts.remember ? { remember: true } : {}), ...(reason ? { reason } : {}) });
  }

  revokeGrant(sessionId: string, grantId: string): void {
    this.#ask({ type: 'approval/revoke', sessionId, grantId }, 'Revoking the permission');
  }

  /** Send the failed turn ending at `seq` again. */
  retry(sessionId: string, seq: number): void {
    this.#ask({ type: 'chat/retry', sessionId, seq, ...this.#composed }, 'Retrying');
  }

  runCommand(command: HostCommand): void {
    post({ type: 'command/run', command });
  }

  setDraft(text: string): void {
    this.draft = text;
    saveState({ draft: text });
  }

  report(id: string, text: string, hint?: string): void {
    // The newest few are enough; an error storm must not fill the panel.
    this.problems = [...this.problems.filter((p) => p.text !== text), { id, text, ...(hint ? { hint } : {}) }].slice(-3);
  }

  /**
   * Send a request; when it fails, say so in words (`what` failed: why, and what to do when
   * its code says), and put `text` back in an empty input. Resolves with the result, or undefined.
   */
  #ask<K extends RequestType>(body: RequestBody<K> & { type: K }, what: string, text?: string): Promise<RequestResults[K] | undefined> {
    const { id, answer } = request<K>(body);
    return answer.catch((err: RequestError) => {
      // The host's words may name sessions by id, or speak to the model: the panel says it in names.
      const target = 'sessionId' in body && typeof body.sessionId === 'string' ? body.sessionId : undefined;
      const closed = err.code === 'NOT_CONTINUABLE' && target !== undefined;
      const message = closed ? `“${nodeName(this.tree.get(target), target)}” takes no messages.` : namesForIds(err.message, (i) => this.tree.get(i));
      this.report(id, `${what} failed: ${message}`, hintFor(err.code));
      // The text goes back into an empty input. A message refused because its session takes
      // none is kept for this view's life only (it can go to the parent), never saved: it is
      // not left behind in the input after a restart. One refused because the selection moved
      // (decision 0120) goes back even over what was typed since, ahead of it: nothing is lost.
      if (text !== undefined && this.draft.trim() === '') {
        if (closed) {
          this.draft = text;
          saveState({ draft: '' });
        } else this.setDraft(text);
      } else if (text !== undefined && err.code === 'SELECTION_CHANGED' && !this.draft.includes(text)) this.setDraft(`${text}\n\n${this.draft}`);
      return undefined;
    });
  }

  dismiss(id: string): void {
    this.problems = this.problems.filter((p) => p.id !== id);
  }
}
