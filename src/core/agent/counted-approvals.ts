import type { ApprovalPort } from '../policy/approval';

/**
 * An agent's approval port, counting the questions under way: the status fold's `approval`
 * (`Agent.awaitingApproval`). Each change of the count is told to `changed` (a view's failure
 * there is its own).
 */
export class CountedApprovals {
  private asking = 0;
  readonly port: ApprovalPort;

  constructor(inner: ApprovalPort, changed: (() => void) | undefined) {
    const told = (): void => {
      try {
        changed?.();
      } catch {
        // a view's failure is its own
      }
    };
    this.port = {
      ask: async (request, signal) => {
        this.asking++;
        told();
        try {
          return await inner.ask(request, signal);
        } finally {
          this.asking--;
          told();
        }
      },
    };
  }

  /** Questions of this agent's turns still waiting for their answer. */
  get waiting(): boolean {
    return this.asking > 0;
  }
}
