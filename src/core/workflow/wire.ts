import type { SessionLog } from '../agent/session-writer';
import type { FeatureRow } from '../feature/rows';
import { type WorkflowBudgets, WorkflowEngine } from './engine';
import type { WorkflowDeployment } from './limits';
import { createWorkflowTool } from './tool';

/** Workflows as the harness holds them: the engine, and closing the runs a crash or reload left open. */
export interface WorkflowWiring {
  engine: WorkflowEngine;
  /** After a session is opened or recovered: its runs without an end are closed `interrupted`. */
  closeOutlived(writer: SessionLog): Promise<string[]>;
  /** End every run before any agent is disposed. */
  close(why: string): Promise<void>;
}

/**
 * The harness row of workflows (kept out of harness.ts): the engine, the global `workflow`
 * tool, and two lifecycle hooks — at open (close runs a crash or reload left open) and at
 * close (end every run before any turn or agent does).
 */
export function workflowRow(deployment: Partial<WorkflowDeployment> = {}, budgets?: WorkflowBudgets): FeatureRow<WorkflowWiring> {
  return {
    name: 'workflow',
    wire({ subagents, tools, host }) {
      const engine = new WorkflowEngine(subagents, deployment, budgets, (id) => host.report(id, 'workflow'));
      tools.register(createWorkflowTool(engine));
      const service: WorkflowWiring = {
        engine,
        closeOutlived: (writer) =>
          WorkflowEngine.closeOutlived(
            writer,
            (id) => engine.isRunning(id),
            (runId) => WorkflowEngine.childrenOfRun(host.store, writer.session.header.id, runId),
          ),
        close: (why) => engine.closeAll(why),
      };
      return { service, hooks: { opened: (agent) => service.closeOutlived(agent).then(() => undefined), close: service.close } };
    },
  };
}
