import type { FeatureRow } from '../feature/rows';
import { GoalDriver } from './driver';
import { GoalService } from './service';
import { createGoalTool } from './tool';

/**
 * The harness row of goals (keeps `harness.ts` to a few lines): the service, the global
 * `goal` tool, and the driver's admit hook. The driver runs when an agent goes idle and after
 * every goal change written in this process (both `live` changes on the harness's stream) (a set or resume arms while the agent is already
 * idle: no idle callback would come).
 */
export function goalRow(defaultMaxRounds?: number): FeatureRow<GoalService> {
  return {
    name: 'goal',
    wire({ host, tools }) {
      const service = new GoalService(host, defaultMaxRounds);
      const driver = new GoalDriver(service);
      // An agent went idle, or a goal change was written: the driver looks whether a round is due.
      host.observe((c) => {
        if (c.type === 'live' && (c.what === 'idle' || c.what === 'goal')) driver.kick(c.sessionId);
      });
      tools.register(createGoalTool(service));
      return {
        service,
        hooks: {
          admit: (id, msg) => driver.admit(id, msg),
          // A Stop pauses an active goal at any moment of its life, between two rounds too.
          stopped: (ids) => driver.stopped(ids),
          // No round starts or is admitted from here on; armed goals end with the process.
          close: () => service.close(),
          // A goal round planned in an idle callback is on its way into the inbox: settle never returns between two rounds.
          whenQuiet: () => service.whenQuiet(),
          isQuiet: () => service.isQuiet,
          // An armed goal runs its next round by itself; its activation lives only here: releasing the root would drop it.
          holds: (agent) => service.holds(agent),
        },
      };
    },
  };
}
