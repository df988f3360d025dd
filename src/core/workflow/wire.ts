import type { SessionLog } from '../agent/session-writer';
import type { ScopeRegistry } from '../scope/registry';
import type { SubagentRuntime } from '../subagent/runtime';
import type { Tool } from '../tools/tool';
import { WorkflowEngine } from './engine';
import type { WorkflowDeployment } from './limits';
import { createWorkflowTool } from './tool';

/**
 * The harness's workflow wiring (kept out of harness.ts): the engine, the global `workflow`
 * tool, and the two lifecycle hooks the harness calls — at open (close runs a crash or
 * reload left open) and at close (end every run before any agent is disposed).
 */
export function wireWorkflows(rt: SubagentRuntime, tools: ScopeRegistry<Tool>, deployment: Partial<WorkflowDeployment> = {}) {
  const engine = new WorkflowEngine(rt, deployment);
  tools.register(createWorkflowTool(engine));
  return {
    engine,
    /** After a session is opened or recovered: its runs without an end are closed `interrupted`. */
    closeOutlived: (writer: SessionLog) => WorkflowEngine.closeOutlived(writer, (id) => engine.isRunning(id)),
    close: (why: string) => engine.closeAll(why),
  };
}
