import type { Admission } from '../agent/config';

/**
 * A caller's own gate in front of a child's requests (a workflow run's concurrency slots,
 * decision 0102). The child is created at once and waits here, shown queued, before it takes
 * the runtime's fan-out slot; so a slot that frees goes straight to a child whose creation and
 * turn start are already on disk.
 *
 * Contract (enforced where it is called, `Gates.chain`):
 * - `enter` is called before each of the child's model requests. It answers undefined when the
 *   child may go on now; `false` when it may not go on at all (its caller is ending it and will
 *   abort its signal); or a promise, which never rejects, of either: true once it may go on
 *   (or once `signal` aborted), false as before. On false the admission waits for the signal,
 *   so the turn ends before any request: a caller that answers false must abort the child.
 * The caller gives its place back itself, when it is done with the child (a run: once the
 * child's "done" is written); leaving the admission leaves only the runtime's own slot.
 */
export interface StartGate {
  enter(childId: string, signal: AbortSignal): Promise<boolean> | false | undefined;
}

/** Resolves once `signal` aborts (at once when it has). */
function aborted(signal: AbortSignal): Promise<void> {
  return signal.aborted ? Promise.resolve() : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/** The children waiting at a caller's gate now: the runtime's live state reads them as queued. */
export class Gates {
  private readonly waiting = new Set<string>();

  /** @param changed told when a child starts or stops waiting at a gate (the runtime's change stream). */
  constructor(private readonly changed: (id: string) => void) {}

  isQueued(id: string): boolean {
    return this.waiting.has(id);
  }

  /** The child's admission: the caller's gate first (queued while it waits), then the runtime's own `inner` slot, which is what leaving leaves. */
  chain(id: string, gate: StartGate, inner: Admission): Admission {
    return {
      enter: async (signal) => {
        const wait = gate.enter(id, signal);
        if (wait !== undefined) {
          this.waiting.add(id);
          this.changed(id);
          try {
            // Not to go on: no request until the caller's abort, which ends the turn before one.
            if (wait === false || !(await wait)) await aborted(signal);
          } finally {
            this.waiting.delete(id);
            this.changed(id);
          }
        }
        if (!signal.aborted) await inner.enter(signal);
      },
      leave: () => inner.leave(),
    };
  }
}
