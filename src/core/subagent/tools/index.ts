import type { Tool } from '../../tools/tool';
import type { SubagentControl } from '../surface';
import { createForkTool } from './fork-tool';
import { createInterruptTool } from './interrupt-tool';
import { createListAgentsTool } from './list-agents-tool';
import { createSendMessageTool } from './send-message-tool';
import { createSubagentTool } from './subagent-tool';

/** The delegation tools every agent sees (report is child-local and registered per child). */
export function delegationTools(rt: SubagentControl): Tool[] {
  return [createForkTool(rt), createInterruptTool(rt), createListAgentsTool(rt), createSendMessageTool(rt), createSubagentTool(rt)];
}
