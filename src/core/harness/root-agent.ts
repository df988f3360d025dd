import { SANDBOX_MODES } from '../policy/sandbox';
import type { ProjectFiles } from '../project/project-files';
import type { RootAgent, SandboxMode } from '../session/events';
import { HarnessError } from './errors';

/** A root conversation's composition from an agent file; its sandbox only when narrower than `current` (the deployment's, or the conversation's own). */
export function rootAgentOf(project: ProjectFiles, name: string, current: SandboxMode): { agent: RootAgent; sandbox?: SandboxMode } {
  const def = project.agent(name);
  if (!def) {
    const known = project.agentNames();
    throw new HarnessError(
      'UNKNOWN_AGENT',
      `No agent named "${name}"${known.length ? `; agents defined in files: ${known.join(', ')}` : ': add one as .arbor/agents/<name>.md'}.`,
    );
  }
  const agent: RootAgent = {
    name: def.name,
    ...(def.persona ? { persona: def.persona } : {}),
    ...(def.tools ? { toolFilter: [...def.tools] } : {}),
    ...(def.model ? { model: def.model } : {}),
  };
  const narrower = def.sandbox && SANDBOX_MODES.indexOf(def.sandbox) < SANDBOX_MODES.indexOf(current) ? def.sandbox : undefined;
  return { agent, ...(narrower ? { sandbox: narrower } : {}) };
}
