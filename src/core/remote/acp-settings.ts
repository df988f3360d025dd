import { SANDBOX_MODES } from '../policy/sandbox';
import type { SandboxMode } from '../session/events';
import { isPlainName } from '../tools/protected-names';
import { jsonObject } from './acp-open';
import type { AcpAgentSettings } from './settings';

// The ACP agents a deployment configures (`arbor.remote.acp` in VS Code, `remote.acp` in the
// CLI's --config file), checked once for both hosts: each problem says what is wrong and what
// to do; the CLI refuses to start on one, VS Code ignores that entry and logs it.

const NAME = /^[A-Za-z0-9][A-Za-z0-9_]{0,39}$/;
const isStringMap = (v: unknown): v is Record<string, string> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');
const positive = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0;

export interface AcpAgentsRead {
  agents: AcpAgentSettings[];
  problems: string[];
}

/** `where` names the setting in messages (`arbor.remote.acp`, `config.json: remote.acp`). */
export function readAcpAgents(raw: unknown, where: string): AcpAgentsRead {
  const out: AcpAgentsRead = { agents: [], problems: [] };
  if (raw === undefined || raw === null) return out;
  if (!Array.isArray(raw)) {
    out.problems.push(`${where} must be a list of agents like [{"name": "claude", "command": "claude-agent-acp"}]; it is ignored.`);
    return out;
  }
  const names = new Set<string>();
  raw.forEach((entry, i) => {
    const read = readOne(entry, names);
    if (typeof read === 'string') out.problems.push(`${where}[${i}]: ${read}; this agent is left out.`);
    else {
      names.add(read.name);
      out.agents.push(read);
    }
  });
  return out;
}

/** One entry, or what is wrong with it. */
function readOne(entry: unknown, names: ReadonlySet<string>): AcpAgentSettings | string {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return 'must be an object with "name" and "command"';
  const e = entry as Record<string, unknown>;
  if (typeof e.name !== 'string' || !NAME.test(e.name))
    return '"name" must be 1–40 letters, digits or "_", starting with a letter or digit (it names the tool delegate_acp_<name>)';
  if (names.has(e.name)) return `the name "${e.name}" is used twice`;
  if (typeof e.command !== 'string' || e.command.trim() === '') return '"command" must name the agent program (a path or a command on PATH)';
  if (e.args !== undefined && (!Array.isArray(e.args) || e.args.some((a) => typeof a !== 'string'))) return '"args" must be a list of strings';
  if (e.env !== undefined && !isStringMap(e.env)) return '"env" must map names to strings';
  if (typeof e.env?.CODEX_CONFIG === 'string' && !jsonObject(e.env.CODEX_CONFIG))
    return '"env.CODEX_CONFIG" must be a JSON object (codex-acp merges it into each session\'s config)';
  if (e.modes !== undefined) {
    if (!isStringMap(e.modes)) return '"modes" must map Arbor sandboxes (read-only, workspace-write, full-access) to the agent\'s mode ids';
    const unknown = Object.keys(e.modes).filter((k) => !SANDBOX_MODES.includes(k as SandboxMode));
    if (unknown.length) return `"modes" has keys that are not Arbor sandboxes: ${unknown.join(', ')} (use read-only, workspace-write, full-access)`;
  }
  if (e.protects !== undefined) {
    if (!Array.isArray(e.protects) || e.protects.some((n) => typeof n !== 'string')) return '"protects" must be a list of names like [".kiro"]';
    const bad = (e.protects as string[]).filter((n) => !isPlainName(n));
    if (bad.length)
      return `"protects" takes plain file or folder names (no "/", "\\", "." or ".."; protected at any depth): ${bad.map((n) => JSON.stringify(n)).join(', ')}`;
  }
  for (const k of ['idleTimeoutMs', 'graceMs', 'turnTimeoutMs'] as const)
    if (e[k] !== undefined && !positive(e[k])) return `"${k}" must be a positive number of milliseconds`;
  for (const k of ['model', 'description'] as const) if (e[k] !== undefined && typeof e[k] !== 'string') return `"${k}" must be a string`;
  const a: AcpAgentSettings = { name: e.name, command: e.command.trim() };
  if (e.args) a.args = [...(e.args as string[])];
  if (e.env) a.env = { ...(e.env as Record<string, string>) };
  if (e.modes) a.modes = { ...(e.modes as Record<string, string>) };
  if (e.protects && (e.protects as string[]).length) a.protects = [...(e.protects as string[])];
  if (e.model) a.model = e.model as string;
  if (e.description) a.description = e.description as string;
  if (e.idleTimeoutMs) a.idleTimeoutMs = Math.round(e.idleTimeoutMs as number);
  if (e.graceMs) a.graceMs = Math.round(e.graceMs as number);
  if (e.turnTimeoutMs) a.turnTimeoutMs = Math.round(e.turnTimeoutMs as number);
  return a;
}
