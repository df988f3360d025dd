import type { Harness } from '../core/harness';

/**
 * The human's goal actions, shared by the panel (goal bar, `goal/*` messages) and the VS Code
 * commands. Set and resume arm the goal in this window (decision 0029); every action refreshes
 * the node, as a session that is not resident is written without an event reaching the panel.
 */
export class GoalActions {
  constructor(
    private readonly harness: () => Promise<Harness>,
    private readonly refresh: (sessionId: string) => Promise<void>,
  ) {}

  async set(sessionId: string, objective: string, maxRounds?: number): Promise<void> {
    const h = await this.harness();
    await h.goals.set(sessionId, objective, maxRounds ?? h.config.goalMaxRounds ?? h.goals.defaultMaxRounds);
    await this.refresh(sessionId);
  }

  async pause(sessionId: string): Promise<void> {
    await (await this.harness()).goals.pause(sessionId);
    await this.refresh(sessionId);
  }

  async resume(sessionId: string): Promise<void> {
    await (await this.harness()).goals.resume(sessionId);
    await this.refresh(sessionId);
  }

  async clear(sessionId: string): Promise<void> {
    await (await this.harness()).goals.clear(sessionId);
    await this.refresh(sessionId);
  }

  async limit(sessionId: string, maxRounds: number): Promise<void> {
    await (await this.harness()).goals.limit(sessionId, maxRounds);
    await this.refresh(sessionId);
  }
}
