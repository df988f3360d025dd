// The panel controller's lifecycle: the harness opened once, on first need, the first fold
// of every log, and `dispose`, after which no harness is opened from here (the host would not
// close it: its store lock held, no clean marker).
import type { Harness } from '../core/harness';

/** A message or question that reached the controller after `dispose` (the window is closing or reloading). */
export class PanelClosedError extends Error {
  readonly code = 'CLOSED';
  constructor(what: string) {
    super(`Arbor's panel is closing (the window is reloading or closing); ${what} was not done. Do it again once Arbor has reopened.`);
  }
}

export class HarnessLifecycle {
  private opened: Harness | undefined;
  /** Settles when the first fold of every log is done (it never rejects). */
  private firstFold: Promise<void> = Promise.resolve();
  /** `dispose` ran: no message is acted on and no harness is opened from here on. */
  private closed = false;

  /**
   * `open`: the harness, created by the host (shared, so it may already be open);
   * `follow`: wires a harness just adopted and returns its first fold (which never rejects).
   */
  constructor(
    private readonly open: () => Promise<Harness>,
    private readonly follow: (h: Harness) => Promise<void>,
  ) {}

  /** The harness once opened here. */
  get harness(): Harness | undefined {
    return this.opened;
  }

  get disposed(): boolean {
    return this.closed;
  }

  /** Settles when the first fold of every log is done (it never rejects). */
  get folded(): Promise<void> {
    return this.firstFold;
  }

  /** The harness, opened on first use; refused (CLOSED) once `dispose` ran, before or while it opened. */
  async ensure(): Promise<Harness> {
    // After dispose the host closes the harness: never open one it would not close (its store lock held, no clean marker).
    if (this.closed) throw new PanelClosedError('the action');
    if (this.opened) return this.opened;
    const h = await this.open();
    if (this.closed) throw new PanelClosedError('the action');
    if (this.opened) return this.opened;
    this.opened = h;
    this.firstFold = this.follow(h);
    return h;
  }

  dispose(): void {
    this.closed = true;
  }
}
