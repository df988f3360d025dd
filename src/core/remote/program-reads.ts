import { AGENT_CONFIG_NAMES, type BuiltInProtectedName } from '../tools/protected-names';
import type { AcpAgentSettings, RemoteSettings } from './settings';

// What the programs Arbor starts read from the folder they run in and act on outside every sandbox
// (decisions 0042, 0112, 0115): protected while they are configured, and, in a folder where a
// command made one, what keeps the CLI from running there (decision 0111, amended in s56).

/** Each fixed program's project configuration, by its settings key (another Arbor reads what Arbor reads). */
const PROGRAM_READS: Record<Exclude<keyof RemoteSettings, 'acp'>, readonly BuiltInProtectedName[]> = {
  codex: ['.codex'],
  claudeCode: ['.claude', '.mcp.json'],
  dshSdk: [],
};

/** `gemini` of `/usr/bin/gemini`, `gemini.cmd` or `gemini.exe`. */
function programName(command: string): string {
  return (command.split(/[\\/]/).pop() ?? '').replace(/\.(cmd|exe|js|mjs)$/i, '').toLowerCase();
}

/** An ACP agent's own names: its known program's (`AGENT_CONFIG_NAMES`, by file name) and its `protects`. */
export function acpAgentNames(a: AcpAgentSettings): string[] {
  return [...(AGENT_CONFIG_NAMES[programName(a.command)] ?? []), ...(a.protects ?? [])];
}

/** The names every program `settings` configures reads from the folder it runs in, once each. */
export function programReadNames(settings: RemoteSettings | undefined): string[] {
  if (!settings) return [];
  const fixed = (Object.keys(PROGRAM_READS) as (keyof typeof PROGRAM_READS)[]).flatMap((k) => (settings[k]?.command ? PROGRAM_READS[k] : []));
  return [...new Set([...fixed, ...(settings.acp ?? []).flatMap(acpAgentNames)])];
}
