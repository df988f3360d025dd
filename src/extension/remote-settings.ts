import { readAcpAgents } from '../core/remote/acp-settings';
import type { ProgramSettings, RemoteSettings } from '../core/remote/settings';

/** A setting's values by layer: the shape of `vscode.WorkspaceConfiguration.inspect` (only the user's layer is read). */
export type InspectSetting = (key: string) => { globalValue?: unknown } | undefined;

/** The programs and the settings under `arbor.remote.<key>` (package.json, all machine-scoped). */
const PROGRAMS: { key: 'codex' | 'claudeCode' | 'dshSdk'; overrides: boolean; baseUrl?: boolean }[] = [
  { key: 'codex', overrides: true },
  { key: 'claudeCode', overrides: false },
  { key: 'dshSdk', overrides: false, baseUrl: true },
];

export interface RemoteRead {
  /** Absent: no program configured, or Restricted Mode (remote providers are off there). */
  remote?: RemoteSettings;
  /** Values that were ignored, and why (for the log). */
  problems: string[];
}

const isStringMap = (v: unknown): v is Record<string, string> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');

/**
 * The remote programs (issue 13, decision 0038) from the user's own settings only: a
 * workspace must never name a binary for Arbor to run, nor its environment. The settings are
 * machine-scoped, so VS Code already ignores workspace values; reading `globalValue` alone
 * keeps that true whatever a `settings.json` holds. In Restricted Mode remote providers are
 * off altogether (they run programs with the user's own rights and keys).
 */
export function readRemoteSettings(inspect: InspectSetting, trusted: boolean): RemoteRead {
  if (!trusted) return { problems: [] };
  const problems: string[] = [];
  const user = (key: string): unknown => inspect(`remote.${key}`)?.globalValue;
  const text = (key: string): string | undefined => {
    const v = user(key);
    if (v === undefined || v === '') return undefined;
    if (typeof v === 'string' && v.trim() !== '') return v.trim();
    problems.push(`arbor.remote.${key} must be a non-empty string; it is ignored.`);
    return undefined;
  };
  const idle = user('idleTimeoutSeconds');
  const idleTimeoutMs = typeof idle === 'number' && Number.isFinite(idle) && idle > 0 ? Math.round(idle * 1000) : undefined;
  if (idle !== undefined && idleTimeoutMs === undefined) problems.push('arbor.remote.idleTimeoutSeconds must be a positive number; the default (300) applies.');
  const wall = user('turnTimeoutMinutes');
  const turnTimeoutMs = typeof wall === 'number' && Number.isFinite(wall) && wall > 0 ? Math.round(wall * 60_000) : undefined;
  if (wall !== undefined && turnTimeoutMs === undefined) problems.push('arbor.remote.turnTimeoutMinutes must be a positive number; the default (60) applies.');
  const remote: RemoteSettings = {};
  for (const p of PROGRAMS) {
    const command = text(`${p.key}.command`);
    if (!command) continue;
    const s: ProgramSettings = { command };
    const model = text(`${p.key}.model`);
    if (model) s.model = model;
    if (p.baseUrl) {
      const url = text(`${p.key}.baseUrl`);
      if (url) s.baseUrl = url;
    }
    const home = text(`${p.key}.home`);
    if (home) s.home = home;
    const env = user(`${p.key}.env`);
    if (isStringMap(env)) {
      if (Object.keys(env).length > 0) s.env = { ...env };
    } else if (env !== undefined) problems.push(`arbor.remote.${p.key}.env must map names to strings; it is ignored.`);
    if (p.overrides) {
      const o = user(`${p.key}.overrides`);
      if (Array.isArray(o) && o.every((x) => typeof x === 'string')) {
        if (o.length > 0) s.overrides = [...o];
      } else if (o !== undefined) problems.push(`arbor.remote.${p.key}.overrides must be a list of strings; it is ignored.`);
    }
    if (idleTimeoutMs !== undefined) s.idleTimeoutMs = idleTimeoutMs;
    if (turnTimeoutMs !== undefined) s.turnTimeoutMs = turnTimeoutMs;
    remote[p.key] = s;
  }
  const acp = readAcpAgents(user('acp'), 'arbor.remote.acp');
  problems.push(...acp.problems);
  for (const a of acp.agents) {
    if (idleTimeoutMs !== undefined && a.idleTimeoutMs === undefined) a.idleTimeoutMs = idleTimeoutMs;
    if (turnTimeoutMs !== undefined && a.turnTimeoutMs === undefined) a.turnTimeoutMs = turnTimeoutMs;
  }
  if (acp.agents.length > 0) remote.acp = acp.agents;
  return Object.keys(remote).length > 0 ? { remote, problems } : { problems };
}
