// What the panel controller talks to: connected views, and the host's hooks (VS Code lives
// behind them, so the controller is tested without one).
import type { BestOfStart } from '../core/harness/bestof/types';
import type { FileChange } from '../core/worktree/diff';
import type { ApprovalPrompt, HostCommand, HostToWebview, PanelSettings } from '../protocol';

/** One connected webview: the side panel or a transcript tab. */
export interface ViewPort {
  readonly view: 'panel' | 'transcript';
  /** The session a transcript tab shows; the panel's selection otherwise. */
  sessionId?: string;
  post(msg: HostToWebview): void;
}

export interface ControllerHooks {
  settings(): PanelSettings;
  openTranscript(sessionId: string): void;
  log(level: 'info' | 'warn' | 'error', text: string): void;
  /** Wrap long work (a cold resume) in host progress UI. */
  progress<T>(title: string, work: () => Promise<T>): Promise<T>;
  /** Run one of Arbor's commands for a notice's button (absent where there is no editor). */
  runCommand?(command: HostCommand): Promise<void>;
  /** Pending approvals changed (`added` when one was just asked): the host badges and notifies. */
  approvalsChanged?(pending: ApprovalPrompt[], added?: ApprovalPrompt): void;
  /** Show the sandbox / approval picker (for one session when given). */
  pickPolicy?(sessionId: string | undefined): void;
  /** Ask the human for a session's budget (an input box) and set it. */
  pickBudget?(sessionId: string): void;
  /**
   * The status bar's figures (statusCounts, totalSpend) moved without an event of their own:
   * the stored sessions' first fold after an open (a window reload), a deletion.
   */
  statusChanged?(): void;
  /**
   * A placed child's apply holds protected paths (decision 0060, amended in s49): ask the human
   * whether to write them (true: apply them too). Absent (no editor): they stay held.
   */
  confirmProtected?(name: string, paths: readonly string[]): Promise<boolean>;
  /** Show a worktree child's changes in the editor's diff view (decision 0060); returns how many files it shows. Absent: no editor. */
  reviewWorktree?(sessionId: string, name: string, files: readonly FileChange[]): Promise<number>;
  /**
   * "Try N ways…" (decision 0061): ask how many ways (2–4), the prompt when the message is a
   * reply, and optionally a model or agent per way. Undefined: the human cancelled. Absent (no
   * editor): two ways of the conversation's model, re-running the human's own message.
   */
  pickWays?(ask: WaysQuestion): Promise<BestOfStart | undefined>;
}

/** What the host's questions for "Try N ways…" offer. */
export interface WaysQuestion {
  /** The message is a reply: the ways need a prompt. */
  needsPrompt: boolean;
  /** The conversation's model now. */
  model: string;
  /** Agents defined in files. */
  agents: readonly string[];
}

/** The connected views and who sees what: a session's messages go to the views showing it. */
export class ViewPorts {
  private readonly ports = new Set<ViewPort>();

  add(port: ViewPort): () => void {
    this.ports.add(port);
    return () => this.ports.delete(port);
  }

  /** The side panel's views (a window has one; tests may connect more). */
  panels(): ViewPort[] {
    return [...this.ports].filter((p) => p.view === 'panel');
  }

  showing(sessionId: string): boolean {
    for (const p of this.ports) if (p.sessionId === sessionId) return true;
    return false;
  }

  /** The sessions (and run nodes) some view shows. */
  shown(): Set<string> {
    const out = new Set<string>();
    for (const p of this.ports) if (p.sessionId !== undefined) out.add(p.sessionId);
    return out;
  }

  toSession(sessionId: string, msg: HostToWebview): void {
    for (const p of this.ports) if (p.sessionId === sessionId) p.post(msg);
  }

  /** To the views of one kind (the panel, or transcript tabs) showing a session. */
  toView(view: ViewPort['view'], sessionId: string, msg: HostToWebview): void {
    for (const p of this.ports) if (p.view === view && p.sessionId === sessionId) p.post(msg);
  }

  broadcast(msg: HostToWebview): void {
    for (const p of this.ports) p.post(msg);
  }
}
