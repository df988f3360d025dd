import { createHash } from 'node:crypto';
import * as path from 'node:path';
import type { McpServerConfig } from './config';
import { serverFingerprint } from './trust-file';
import { readBook, setInBook } from './workspace-book';

// What each workspace server ran when the user last allowed it (`arbor mcp allow NAME`) or last
// started it with `--allow-mcp NAME` (decision 0112): a file in the store folder, keyed by the
// workspace's real path. `--allow-mcp NAME` names a server, not what it runs, so a script that
// passes it on every run would start whatever the workspace's file says that day; with the pin it
// starts only what it started the first time, and a change is refused, saying which part changed.
// Digests only, and the names of the environment's variables and headers (never a value).

/** One server's parts, each as a digest, so a refusal can say which changed. */
export interface ServerPin {
  fingerprint: string;
  parts: Record<string, string>;
  /** Names of its `env` variables (stdio) or headers (http), sorted. */
  names: string[];
}

const digest = (v: unknown) => createHash('sha256').update(JSON.stringify(v)).digest('hex').slice(0, 16);

export function pinOf(s: McpServerConfig): ServerPin {
  const t = s.transport;
  const values = t.kind === 'stdio' ? t.env : t.headers;
  const names = Object.keys(values).sort();
  const parts: Record<string, string> =
    t.kind === 'stdio'
      ? { kind: 'stdio', command: digest(t.command), args: digest(t.args), cwd: digest(t.cwd ?? ''), values: digest(names.map((n) => values[n])) }
      : { kind: 'http', url: digest(t.url), values: digest(names.map((n) => values[n])) };
  return { fingerprint: serverFingerprint(s), parts, names };
}

const WORDS: Record<string, string> = {
  kind: 'its transport',
  command: 'its command',
  args: 'its arguments',
  cwd: 'its working folder',
  url: 'its URL',
};

/** Which parts differ, in words: "its arguments", "its environment (NODE_OPTIONS added)". */
export function changedParts(before: ServerPin, now: ServerPin, http: boolean): string[] {
  if (before.parts.kind !== now.parts.kind) return [WORDS.kind];
  const out = Object.keys(WORDS)
    .filter((k) => k !== 'kind' && before.parts[k] !== now.parts[k])
    .map((k) => WORDS[k]);
  const what = http ? 'its headers' : 'its environment';
  const added = now.names.filter((n) => !before.names.includes(n));
  const removed = before.names.filter((n) => !now.names.includes(n));
  const named = [...added.map((n) => `${n} added`), ...removed.map((n) => `${n} removed`)];
  if (named.length > 0) out.push(`${what} (${named.join(', ')})`);
  else if (before.parts.values !== now.parts.values) out.push(`${what}'s values`);
  return out;
}

export class PinFile {
  constructor(
    private readonly file: string,
    private readonly workspace: string,
  ) {}

  static inStore(storeDir: string, workspace: string): PinFile {
    return new PinFile(path.join(storeDir, 'mcp-pinned.json'), workspace);
  }

  get(name: string): ServerPin | undefined {
    const p = readBook<ServerPin>(this.file)[this.workspace]?.[name];
    return p && typeof p.fingerprint === 'string' && typeof p.parts === 'object' && Array.isArray(p.names) ? p : undefined;
  }

  pin(s: McpServerConfig): void {
    setInBook(this.file, this.workspace, s.name, pinOf(s));
  }
}

/** Whether `--allow-mcp NAME` may start `s` this run: as pinned, or its first time here. */
export type RunAllow = { ok: true; first: boolean } | { ok: false; changed: string[] };

/**
 * `s` against what was pinned for its name, or else against the fingerprint it was last allowed
 * with (`allowedAs`; an allow from before pins existed): unchanged, or never seen here, it may
 * start; changed, it may not, and `changed` says which parts.
 */
export function checkRunAllow(s: McpServerConfig, pin: ServerPin | undefined, allowedAs: string | undefined): RunAllow {
  const now = pinOf(s);
  if (allowedAs === now.fingerprint) return { ok: true, first: false };
  if (pin) {
    if (pin.fingerprint === now.fingerprint) return { ok: true, first: false };
    const changed = changedParts(pin, now, s.transport.kind === 'http');
    return { ok: false, changed: changed.length > 0 ? changed : ['what it runs'] };
  }
  if (allowedAs !== undefined) return { ok: false, changed: ['what it runs'] };
  return { ok: true, first: true };
}
