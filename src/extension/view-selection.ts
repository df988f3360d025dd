// Which session the views show: the panel's selection, a session selected in one view or in
// every panel (a transcript tab stays on its session), and "+" (a draft: nothing selected).
import type { ControllerHooks, ViewPort, ViewPorts } from './view-port';

/** What selecting needs, passed in by the controller. */
export interface SelectionDeps {
  views: ViewPorts;
  /** The tree follows a session a view is about to show (`TreeSync.track`). */
  track(sessionId: string): void;
  /** Open (or reveal) a session's transcript tab (the host's hook). */
  openTranscript(sessionId: string): void;
  /** Send a view the session's page, then its deltas (`SessionFeed.reset`). */
  reset(port: ViewPort, sessionId: string): Promise<void>;
  log: ControllerHooks['log'];
}

export class ViewSelection {
  private current: string | undefined;

  constructor(private readonly deps: SelectionDeps) {}

  /** The panel's selected session, if any. */
  get selected(): string | undefined {
    return this.current;
  }

  /** A panel selected a session itself (its view already follows it). */
  setSelected(sessionId: string): void {
    this.current = sessionId;
  }

  select(port: ViewPort, sessionId: string): void {
    this.deps.track(sessionId);
    if (port.view === 'transcript') {
      // A transcript tab stays on its session: a fork made there opens in a tab of its own.
      this.deps.openTranscript(sessionId);
      this.selectEverywhere(sessionId);
      return;
    }
    this.current = sessionId;
    port.sessionId = sessionId;
    port.post({ type: 'session/selected', sessionId });
    void this.deps.reset(port, sessionId).catch((err) => this.deps.log('warn', String(err)));
  }

  selectEverywhere(sessionId: string): void {
    this.deps.track(sessionId);
    for (const p of this.deps.views.panels()) this.select(p, sessionId);
  }

  /** "+": nothing selected, the input focused; the conversation is created by its first message. */
  newDraft(): void {
    this.current = undefined;
    for (const p of this.deps.views.panels()) {
      p.sessionId = undefined;
      p.post({ type: 'draft/start' });
    }
  }
}
