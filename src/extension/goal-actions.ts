import type { Harness } from '../core/harness';

/**
 * The human's goal actions, shared by the panel (goal bar, `goal/*` messages) and the VS Code
 * commands. Set and resume arm the goal in this window (decision 0029). Nothing is refreshed by
 * hand: the `goal/change` event and the arming reach the panel on the change stream, whether the
 * session is resident or not (decision 0054).
 */
export class GoalActions {
  constructor(private readonly harness: () => Promise<Harness>) {}

  async set(sessionId: string, objective: string, maxRounds?: number): Promise<void> {
    const h = await this.harness();
    await h.goals.set(sessionId, objective, maxRounds ?? h.config.goalMaxRounds ?? h.goals.defaultMaxRounds);
  }

  async pause(sessionId: string): Promise<void> {
    await (await this.harness()).goals.pause(sessionId);
  }

  async resume(sessionId: string): Promise<void> {
    await (await this.harness()).goals.resume(sessionId);
  }

  async clear(sessionId: string): Promise<void> {
    await (await this.harness()).goals.clear(sessionId);
  }

  async limit(sessionId: string, maxRounds: number): Promise<void> {
    await (await this.harness()).goals.limit(sessionId, maxRounds);
  }
}
