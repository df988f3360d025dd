import { SANDBOX_MODES } from '../policy/sandbox';
import type { AgentDefinition } from '../project/agent-file';
import type { SandboxMode } from '../session/events';
import { SubagentError, type SubagentRequest } from './types';

/** Where the runtime finds agents defined in files (the harness's `ProjectFiles`). */
export interface AgentLookup {
  agent(name: string): AgentDefinition | undefined;
  agentNames(): string[];
}

/**
 * A request naming an agent file, made concrete (decision 0056): the file's persona (a caller's
 * persona follows it), its tools intersected with the caller's own — what the caller cannot call,
 * the child never sees — its model unless the caller names one, its sandbox as a narrowing (the
 * runtime clamps it to the caller's), and its name in the tree.
 */
export function resolveAgentRequest(asked: SubagentRequest, lookup: AgentLookup | undefined, callerTools: readonly string[]): SubagentRequest {
  const name = asked.agent ?? '';
  const def = lookup?.agent(name);
  if (!def) {
    const known = lookup?.agentNames() ?? [];
    throw new SubagentError(
      'UNKNOWN_AGENT',
      known.length
        ? `No agent named "${name}". Agents defined in files: ${known.join(', ')}.`
        : `No agent named "${name}": no agent files are defined (.arbor/agents/*.md or .claude/agents/*.md). Leave agent out, or ask the user to add one.`,
    );
  }
  const mine = new Set(callerTools);
  let tools = (def.tools ?? callerTools).filter((t) => mine.has(t));
  if (asked.toolFilter) {
    const narrower = new Set(asked.toolFilter);
    tools = tools.filter((t) => narrower.has(t));
  }
  const personaText = [def.persona, asked.persona?.text].filter((t) => t?.trim()).join('\n\n');
  const label = asked.label ? `${def.name} · ${asked.label}` : def.name;
  return {
    ...asked,
    label,
    toolFilter: tools,
    ...(personaText ? { persona: { text: personaText } } : {}),
    ...((asked.model ?? def.model) ? { model: asked.model ?? def.model } : {}),
    ...(def.isolation && !asked.isolation ? { isolation: def.isolation } : {}),
    ...(def.placement && !asked.placement ? { placement: def.placement } : {}),
    ...(def.sandbox ? { sandbox: asked.sandbox ? narrowest(asked.sandbox, def.sandbox) : def.sandbox } : {}),
  };
}

/** The narrower of two sandbox modes (read-only < workspace-write < full-access). */
export function narrowest(a: SandboxMode, b: SandboxMode): SandboxMode {
  return SANDBOX_MODES.indexOf(a) <= SANDBOX_MODES.indexOf(b) ? a : b;
}
