import { readAcpAgents } from '../core/remote/acp-settings';
import type { ProgramSettings, RemoteSettings } from '../core/remote/settings';
import { type ParsedArgs, UsageError } from './args';
import { readConfigFile } from './config-file';

const PROGRAMS = ['codex', 'claudeCode', 'dshSdk'] as const;
const positive = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0;

/**
 * Remote programs (issue 13) from `--config FILE` or `$ARBOR_CONFIG`: a JSON file
 * `{"remote": {"codex": {"command": …, "model"?, "env"?, "home"?, "overrides"?}, "claudeCode": {…},
 * "dshSdk": {"command": "…/bin/arbor.js", "baseUrl"?, "model"?, "env"?, "home"?}, "turnTimeoutMinutes"?}}`;
 * each program may also give `idleTimeoutMs`, `graceMs` and its own `turnTimeoutMs`.
 * The user's own file (like VS Code's machine-scoped settings), never the workspace's.
 */
export function remoteFromConfig(args: ParsedArgs, env: NodeJS.ProcessEnv, read = readConfigFile(args, env)): RemoteSettings | undefined {
  if (!read) return undefined;
  const { file, raw } = read;
  const remote = (raw as { remote?: unknown } | null)?.remote;
  if (remote === undefined) return undefined;
  if (typeof remote !== 'object' || remote === null)
    throw new UsageError(`${file}: "remote" must be an object with "codex", "claudeCode", "dshSdk" and/or "acp".`);
  const wall = (remote as Record<string, unknown>).turnTimeoutMinutes;
  if (wall !== undefined && !positive(wall)) throw new UsageError(`${file}: remote.turnTimeoutMinutes must be a positive number of minutes.`);
  const turnTimeoutMs = wall === undefined ? undefined : Math.round((wall as number) * 60_000);
  const out: RemoteSettings = {};
  for (const key of PROGRAMS) {
    const p = (remote as Record<string, unknown>)[key] as Partial<ProgramSettings> | undefined;
    if (p === undefined) continue;
    if (typeof p !== 'object' || p === null || typeof p.command !== 'string' || p.command === '')
      throw new UsageError(`${file}: remote.${key}.command must name the program (a path or a command on PATH).`);
    if (p.env !== undefined && (typeof p.env !== 'object' || p.env === null || Object.values(p.env).some((v) => typeof v !== 'string')))
      throw new UsageError(`${file}: remote.${key}.env must map names to strings.`);
    if (p.baseUrl !== undefined && (typeof p.baseUrl !== 'string' || !/^https?:\/\//.test(p.baseUrl)))
      throw new UsageError(`${file}: remote.${key}.baseUrl must be an http(s) URL.`);
    for (const k of ['idleTimeoutMs', 'graceMs', 'turnTimeoutMs'] as const)
      if (p[k] !== undefined && !positive(p[k])) throw new UsageError(`${file}: remote.${key}.${k} must be a positive number of milliseconds.`);
    out[key] = { ...(turnTimeoutMs ? { turnTimeoutMs } : {}), ...(p as ProgramSettings) };
  }
  const acp = readAcpAgents((remote as Record<string, unknown>).acp, `${file}: remote.acp`);
  if (acp.problems.length) throw new UsageError(acp.problems.join('\n'));
  for (const a of acp.agents) if (turnTimeoutMs && a.turnTimeoutMs === undefined) a.turnTimeoutMs = turnTimeoutMs;
  if (acp.agents.length) out.acp = acp.agents;
  return out;
}
