// Which session the views show: the panel's selection, a session selected in one view or in
// every panel (a transcript tab stays on its session), and "+" (a draft: nothing selected).
// Every change of a panel's selection, the host's or the panel's own, gets the next number of one
// counter, here (decision 0120): a panel adopts a selection only when its number is newer, and a
// message composed under a selection that has since moved elsewhere is refused, not misdelivered.
import type { SelectionRedo } from '../protocol';
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

/** A message composed against a panel selection the panel no longer has: nothing was done. */
export class SelectionChangedError extends Error {
  readonly code = 'SELECTION_CHANGED';
}

export class ViewSelection {
  private current: string | undefined;
  /** The last number given to a selection change (any panel's); numbers only grow. */
  private counter = 0;
  /** Per panel, the number of its selection now (absent: none given yet, read as 0). */
  private readonly numbers = new WeakMap<ViewPort, number>();

  constructor(private readonly deps: SelectionDeps) {}

  /** The panel's selected session, if any. */
  get selected(): string | undefined {
    return this.current;
  }

  /** The number of a panel's selection now (0 before its first). */
  numberOf(port: ViewPort): number {
    return this.numbers.get(port) ?? 0;
  }

  /** A panel's selection changed (to `port.sessionId`): its next number, which the panel is told with it. */
  private stamp(port: ViewPort): number {
    this.counter++;
    this.numbers.set(port, this.counter);
    return this.counter;
  }

  /** A panel's snapshot: its selection is the host's, numbered now (the snapshot carries the number). */
  adopt(port: ViewPort): number {
    port.sessionId = this.current;
    return this.stamp(port);
  }

  /**
   * A panel's own selection, on arrival (before any await, so a message the panel sent after
   * it is judged against it). A click is followed and said back with its number; a selection
   * restored after a reload, composed before the host's latest, is dropped (false): the host's
   * choice since (a conversation the user started) stands, and the panel adopts it.
   */
  follow(port: ViewPort, sessionId: string, composedUnder: number | undefined, restored: boolean): boolean {
    if (port.view !== 'panel') return true; // a transcript tab's session is not the panel's selection
    if (restored && (composedUnder ?? 0) < this.numberOf(port)) {
      this.deps.log('info', `a restored selection (${sessionId}) crossed a newer one of the host's (${port.sessionId ?? 'a new conversation'}); dropped`);
      return false;
    }
    this.current = sessionId;
    port.sessionId = sessionId;
    port.post({ type: 'session/selected', sessionId, selection: this.stamp(port) });
    return true;
  }

  /**
   * Refuse (throw) a message a panel composed against its selection numbered `composedUnder`
   * when that selection has since changed and the message names another session than the one
   * the panel is now told it shows: sent, it would act on a session the panel no longer shows.
   * A message naming the session selected now is let through, however it crossed. `redo`: how
   * the user does it again (its row in `ACTS_ON_SELECTION`).
   */
  check(port: ViewPort, sessionId: string | undefined, composedUnder: number | undefined, redo: SelectionRedo): void {
    if (port.view !== 'panel' || composedUnder === undefined) return;
    if (composedUnder >= this.numberOf(port) || sessionId === port.sessionId) return;
    const now = port.sessionId === undefined ? 'a new conversation' : port.sessionId;
    const then = sessionId === undefined ? 'a new conversation' : sessionId;
    // A send's text goes back to the input; an action (a bar's button, Fork, Rewind…) is done again by hand.
    const next =
      redo === 'typed' ? `It is still in the input: send it again to ${now}, or select ${then} first.` : `Select ${then} and do it again if you meant it.`;
    throw new SelectionChangedError(`The panel switched to ${now} while this was on its way to ${then}; nothing was done. ${next}`);
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
    port.post({ type: 'session/selected', sessionId, selection: this.stamp(port) });
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
      p.post({ type: 'draft/start', selection: this.stamp(p) });
    }
  }
}
