import type { Tool } from '../tools/tool';
import type { InboxAcceptedEvent } from '../session/events';
import { GoalDriver } from './driver';
import { GoalService, type GoalHost } from './service';
import { createGoalTool } from './tool';

/** What the harness gives the goal wiring: its goal host plus its idle notifications. */
export interface GoalWiringHost extends GoalHost {
  onIdle(fn: (sessionId: string) => void): () => void;
}

/** Goals as the harness holds them: the service, the driver's admit hook, the global tool. */
export interface GoalWiring {
  service: GoalService;
  /** For every agent's `AgentConfig.admit`. */
  admit(sessionId: string, msg: InboxAcceptedEvent): boolean | Promise<boolean>;
  tool: Tool;
}

/**
 * Wire goals into a harness (keeps `harness.ts` to a few lines): the driver runs when an agent
 * goes idle and after every goal change written in this process (a set or resume arms while
 * the agent is already idle: no idle callback would come).
 */
export function wireGoals(host: GoalWiringHost, defaultMaxRounds?: number): GoalWiring {
  const service = new GoalService(host, defaultMaxRounds);
  const driver = new GoalDriver(service);
  host.onIdle((id) => driver.kick(id));
  service.onChange((id) => driver.kick(id));
  return { service, admit: (id, msg) => driver.admit(id, msg), tool: createGoalTool(service) };
}
