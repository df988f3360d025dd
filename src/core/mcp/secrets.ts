import type { McpServerConfig } from './config';

// Values a server's config hands it (env values, header values) may be tokens. They go to the
// server and nowhere else: every text that leaves the client (a tool result, an error, a state
// line) passes through `redact` first, so a server that echoes its environment does not put a
// token in the log, the store or an event.

const MIN = 4;

/** The secret-looking values of a config: every env and header value long enough to matter. */
export function secretsOf(server: McpServerConfig): string[] {
  const t = server.transport;
  const values = t.kind === 'stdio' ? Object.values(t.env) : Object.values(t.headers).flatMap(headerSecrets);
  return [...new Set(values.filter((v) => v.length >= MIN))];
}

/** `Bearer abc` holds the secret `abc` too: a redaction of the whole value would miss the token alone. */
function headerSecrets(v: string): string[] {
  const parts = v.split(/\s+/).filter((p) => p.length >= MIN);
  return [v, ...parts.slice(1)];
}

/** Replace every occurrence of a secret by `[redacted]` (longest first, so a prefix never leaves a tail). */
export function redact(text: string, secrets: readonly string[]): string {
  if (secrets.length === 0) return text;
  let out = text;
  for (const s of [...secrets].sort((a, b) => b.length - a.length)) if (s && out.includes(s)) out = out.split(s).join('[redacted]');
  return out;
}

/**
 * `v` with every string in it (keys too) redacted, its shape kept: a secret that is also JSON's
 * own text (an env value `true`) never breaks the structure, as a redaction of the serialized
 * form would.
 */
export function redactDeep<T>(v: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return v;
  const walk = (x: unknown): unknown => {
    if (typeof x === 'string') return redact(x, secrets);
    if (Array.isArray(x)) return x.map(walk);
    if (x === null || typeof x !== 'object') return x;
    const out: Record<string, unknown> = {};
    // Defined, not assigned: a key `__proto__` stays a key.
    for (const [k, y] of Object.entries(x))
      Object.defineProperty(out, redact(k, secrets), { value: walk(y), enumerable: true, writable: true, configurable: true });
    return out;
  };
  return walk(v) as T;
}

/** A config as it may be shown or stored: env and header values replaced. */
export function publicTransport(server: McpServerConfig): Record<string, unknown> {
  const t = server.transport;
  const hide = (m: Record<string, string>) => Object.fromEntries(Object.keys(m).map((k) => [k, '[redacted]']));
  return t.kind === 'stdio' ? { kind: 'stdio', command: t.command, args: t.args, env: hide(t.env) } : { kind: 'http', url: t.url, headers: hide(t.headers) };
}

/**
 * What a server runs, for a human deciding whether to allow it: the command line (its configured
 * secrets redacted, cut to 300 characters) or the URL without its query.
 */
export function runsLine(server: McpServerConfig): string {
  const t = server.transport;
  const secrets = secretsOf(server);
  if (t.kind === 'http') {
    const u = new URL(t.url);
    return redact(`${u.origin}${u.pathname}`, secrets);
  }
  const line = redact([t.command, ...t.args].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(' '), secrets);
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
