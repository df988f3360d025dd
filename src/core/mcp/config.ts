import * as fs from 'node:fs';
import * as path from 'node:path';
import { type ExpandContext, expandVariables } from './expand';

export type { ExpandContext };

// Where MCP servers come from, in the formats users already have (decision 0055): Claude
// Code's `.mcp.json`, VS Code's `.vscode/mcp.json`, a user-level list (the extension's
// `arbor.mcp.servers` setting), a CLI `--mcp-config` file, and ACP `session/new`. A bad entry
// is an error naming the file and the problem; it never takes the other servers down.

/** Who put a server there: workspace files need the user's allow first; the rest are the user's own choice. */
export type McpSource = 'workspace' | 'vscode' | 'user' | 'cli' | 'acp';

export type McpTransport =
  | { kind: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd?: string }
  | { kind: 'http'; url: string; headers: Record<string, string> };

export interface McpServerConfig {
  /** As the user named it; tool names carry it (`mcp__<name>__<tool>`). */
  name: string;
  source: McpSource;
  /** The file it was read from (absent for a setting or ACP). */
  file?: string;
  transport: McpTransport;
}

export interface McpConfigError {
  /** The file (or `setting arbor.mcp.servers`, `ACP session/new`) the problem is in. */
  where: string;
  server?: string;
  message: string;
}

export interface McpConfigRead {
  servers: McpServerConfig[];
  errors: McpConfigError[];
}

/**
 * A server name that makes a tool name the model wire accepts, never contains the `__`
 * separator and never ends in `_` (else server `a_` tool `x` and server `a` tool `_x` would
 * both be `mcp__a___x`: one server's tool could take another's name).
 */
const NAME = /^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,30}[A-Za-z0-9-])?$/;

/** Workspace sources need the user's allow before they start (Claude Code asks the same). */
export function needsAllow(source: McpSource): boolean {
  return source === 'workspace' || source === 'vscode';
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function stringMap(v: unknown, field: string): Record<string, string> | string {
  if (v === undefined) return {};
  if (!isRecord(v)) return `"${field}" must be an object of strings`;
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) {
    if (typeof x !== 'string') return `"${field}.${k}" must be a string`;
    out[k] = x;
  }
  return out;
}

/**
 * One server entry, in either format: `{command, args, env, cwd}` (stdio; `type: "stdio"`
 * optional) or `{type: "http" | "streamable-http", url, headers}`. Variables are expanded only
 * where `expand` is given (VS Code expands `${workspaceFolder}` and `${env:X}`; Claude Code `${X}`).
 */
export function parseServer(name: string, raw: unknown, source: McpSource, where: string, expand?: ExpandContext): McpServerConfig | McpConfigError {
  const err = (message: string): McpConfigError => ({ where, server: name, message });
  if (!NAME.test(name) || name.includes('__'))
    return err(`server name "${name}" must be 1-32 letters, digits, "-" or "_" (no "__"), starting with a letter or digit and not ending in "_"`);
  if (!isRecord(raw)) return err('the entry must be an object with "command" (stdio) or "type": "http" and "url"');
  const x = (s: string) => (expand ? expandVariables(s, expand) : s);
  const type = raw.type ?? (raw.url !== undefined ? 'http' : 'stdio');
  const file = source === 'acp' ? undefined : where;
  if (type === 'http' || type === 'streamable-http' || type === 'streamableHttp') {
    if (typeof raw.url !== 'string' || raw.url === '') return err('"url" must be a non-empty string for an http server');
    let url: URL;
    try {
      url = new URL(x(raw.url));
    } catch {
      return err(`"url" ${JSON.stringify(raw.url)} is not a valid URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return err(`"url" must be http: or https:, got ${url.protocol}`);
    const headers = stringMap(raw.headers, 'headers');
    if (typeof headers === 'string') return err(headers);
    for (const k of Object.keys(headers)) headers[k] = x(headers[k]);
    return { name, source, ...(file ? { file } : {}), transport: { kind: 'http', url: url.toString(), headers } };
  }
  if (type === 'sse') return err('"type": "sse" (the deprecated HTTP+SSE transport) is not supported; use the streamable HTTP endpoint with "type": "http"');
  if (type !== 'stdio') return err(`"type" must be "stdio" or "http", got ${JSON.stringify(type)}`);
  if (typeof raw.command !== 'string' || raw.command.trim() === '') return err('"command" must be a non-empty string for a stdio server');
  if (raw.args !== undefined && (!Array.isArray(raw.args) || raw.args.some((a) => typeof a !== 'string'))) return err('"args" must be an array of strings');
  const env = stringMap(raw.env, 'env');
  if (typeof env === 'string') return err(env);
  for (const k of Object.keys(env)) env[k] = x(env[k]);
  if (raw.cwd !== undefined && typeof raw.cwd !== 'string') return err('"cwd" must be a string');
  const cwd = typeof raw.cwd === 'string' ? x(raw.cwd) : undefined;
  return {
    name,
    source,
    ...(file ? { file } : {}),
    transport: { kind: 'stdio', command: x(raw.command), args: ((raw.args as string[] | undefined) ?? []).map(x), env, ...(cwd ? { cwd } : {}) },
  };
}

/** Parse a map `{name: entry}` (the value of `mcpServers` or `servers`). */
export function parseServerMap(map: unknown, source: McpSource, where: string, key: string, expand?: ExpandContext): McpConfigRead {
  const out: McpConfigRead = { servers: [], errors: [] };
  if (map === undefined) return out;
  if (!isRecord(map)) {
    out.errors.push({ where, message: `"${key}" must be an object mapping server names to their settings` });
    return out;
  }
  for (const [name, raw] of Object.entries(map)) {
    const r = parseServer(name, raw, source, where, expand);
    if ('message' in r) out.errors.push(r);
    else out.servers.push(r);
  }
  return out;
}

function emptyFolder(p: string): boolean {
  try {
    return fs.readdirSync(p).length === 0;
  } catch {
    return false;
  }
}

function readJson(file: string): { value: unknown } | { error: string } | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // An empty folder in its place is a confined command's read-only stand-in (decision 0112): no file.
    if (code === 'ENOENT' || (code === 'EISDIR' && emptyFolder(file))) return undefined;
    return { error: `cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  try {
    // VS Code's mcp.json is JSONC: drop whole-line comments and trailing commas before parsing.
    const cleaned = text.replace(/^\s*\/\/.*$/gm, '').replace(/,(\s*[}\]])/g, '$1');
    return { value: JSON.parse(cleaned) };
  } catch (e) {
    return { error: `is not valid JSON: ${(e as Error).message}` };
  }
}

/** A file of one format: `{"<key>": {...}}`; a missing file is no servers and no error. */
export function readServerFile(file: string, key: 'mcpServers' | 'servers', source: McpSource, expand?: ExpandContext): McpConfigRead {
  const r = readJson(file);
  if (!r) return { servers: [], errors: [] };
  if ('error' in r) return { servers: [], errors: [{ where: file, message: `${path.basename(file)} ${r.error}; fix it and reload` }] };
  if (!isRecord(r.value)) return { servers: [], errors: [{ where: file, message: 'the file must hold a JSON object' }] };
  // A CLI file may use either key (a copy of .mcp.json or of .vscode/mcp.json).
  const k = key === 'mcpServers' && r.value.mcpServers === undefined && r.value.servers !== undefined ? 'servers' : key;
  return parseServerMap(r.value[k], source, file, k, expand);
}

/** The workspace's own servers: `.mcp.json` (Claude Code) and `.vscode/mcp.json` (VS Code, variables expanded). */
export function readWorkspaceServers(root: string, env: NodeJS.ProcessEnv = process.env): McpConfigRead {
  const a = readServerFile(path.join(root, '.mcp.json'), 'mcpServers', 'workspace', { workspaceFolder: root, env });
  const b = readServerFile(path.join(root, '.vscode', 'mcp.json'), 'servers', 'vscode', { workspaceFolder: root, env });
  return merge([a, b]);
}

/** Several reads as one; a later server of a name already taken is an error (the first one stays). */
export function merge(reads: readonly McpConfigRead[]): McpConfigRead {
  const out: McpConfigRead = { servers: [], errors: [] };
  const seen = new Map<string, McpServerConfig>();
  for (const r of reads) {
    out.errors.push(...r.errors);
    for (const s of r.servers) {
      const first = seen.get(s.name);
      if (first) {
        out.errors.push({
          where: s.file ?? s.source,
          server: s.name,
          message: `a server named "${s.name}" is already defined in ${first.file ?? first.source}; this one is ignored (rename one of them)`,
        });
        continue;
      }
      seen.set(s.name, s);
      out.servers.push(s);
    }
  }
  return out;
}

/** One line for a person: where, which server, what is wrong. */
export function describeConfigError(e: McpConfigError): string {
  return `MCP config ${e.where}${e.server ? `, server "${e.server}"` : ''}: ${e.message}`;
}
