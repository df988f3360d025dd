import { createHash } from 'node:crypto';
import type { McpServerConfig } from './config';

// What a workspace server runs, as digests (decisions 0055, 0112): the whole as one fingerprint —
// what an allow names, here and in the extension's memory — and each part on its own, so that
// `--allow-mcp NAME` can refuse a change naming the part that changed. A server is allowed with
// what it runs (command, arguments, cwd and environment, or URL and headers): a workspace whose
// `.mcp.json` later points the same name at another program — or gives it `NODE_OPTIONS` /
// `LD_PRELOAD`, which run code of their own — must be allowed again. Headers count as the
// environment does: they carry no code, but `${env:X}` expands into them, and a repository that
// adds one would send the user's variable to the server unasked. Digests only, and the names of
// the environment's variables and headers (never a value). Kept by the CLI in `trust-file.ts`.

const sorted = (m: Record<string, string>) => Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
/** The one digest: of the whole and of each part alike. */
const digest = (v: unknown) => createHash('sha256').update(JSON.stringify(v)).digest('hex').slice(0, 16);

/** What `s` runs, as one digest: equal exactly when every part is. */
export function serverFingerprint(s: McpServerConfig): string {
  const t = s.transport;
  // A server without headers keeps the digest it had before headers counted (its allow holds).
  const headers = t.kind === 'http' && Object.keys(t.headers).length > 0 ? [JSON.stringify(sorted(t.headers))] : [];
  const what = t.kind === 'stdio' ? ['stdio', t.command, ...t.args, t.cwd ?? '', JSON.stringify(sorted(t.env))] : ['http', t.url, ...headers];
  return digest(what);
}

/** One server's parts, each as a digest, so a refusal can say which changed. */
export interface ServerPin {
  fingerprint: string;
  parts: Record<string, string>;
  /** Names of its `env` variables (stdio) or headers (http), sorted. */
  names: string[];
}

/** What was known to run under a name: a pin, or an allow kept from before pins (a fingerprint only). */
export type KnownRun = Pick<ServerPin, 'fingerprint'> & Partial<Pick<ServerPin, 'parts' | 'names'>>;

/** What `s` runs, whole and part by part. */
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

/** Whether `--allow-mcp NAME` may start `s` this run: as pinned, or its first time here. */
export type RunAllow = { ok: true; first: boolean } | { ok: false; changed: string[] };

/**
 * `s` against what the book holds for its name (`trust-file.ts`: a pin, or an allow, which pins):
 * unchanged, or never seen here, it may start; changed, it may not, and `changed` says which
 * parts (an allow kept from before pins has none: "what it runs").
 */
export function checkRunAllow(s: McpServerConfig, record: KnownRun | undefined): RunAllow {
  if (!record) return { ok: true, first: true };
  const now = pinOf(s);
  if (record.fingerprint === now.fingerprint) return { ok: true, first: false };
  const changed =
    record.parts && record.names
      ? changedParts({ fingerprint: record.fingerprint, parts: record.parts, names: record.names }, now, s.transport.kind === 'http')
      : [];
  return { ok: false, changed: changed.length > 0 ? changed : ['what it runs'] };
}
