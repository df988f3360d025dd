import { createHash } from 'node:crypto';
import * as path from 'node:path';
import type { McpServerConfig } from './config';
import type { McpTrust } from './deployment';
import { readBook, setInBook, type WorkspaceBook } from './workspace-book';

// The CLI's memory of which workspace servers the user allowed (`arbor mcp allow NAME`,
// `--allow-mcp NAME`): a JSON file in the store folder, keyed by the workspace's real path.
// An allow names the server *and* what it runs (command, arguments, cwd and environment, or URL
// and headers): a workspace whose `.mcp.json` later points the same name at another program — or
// gives it `NODE_OPTIONS` / `LD_PRELOAD`, which run code of their own — must be allowed again.
// Headers count as the environment does: they carry no code, but `${env:X}` expands into them,
// and a repository that adds one would send the user's variable to the server unasked. Only a
// digest is kept, never a value.

const sorted = (m: Record<string, string>) => Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

export function serverFingerprint(s: McpServerConfig): string {
  const t = s.transport;
  // A server without headers keeps the digest it had before headers counted (its allow holds).
  const headers = t.kind === 'http' && Object.keys(t.headers).length > 0 ? [JSON.stringify(sorted(t.headers))] : [];
  const what = t.kind === 'stdio' ? ['stdio', t.command, ...t.args, t.cwd ?? '', JSON.stringify(sorted(t.env))] : ['http', t.url, ...headers];
  return createHash('sha256').update(JSON.stringify(what)).digest('hex').slice(0, 16);
}

export class FileTrust implements McpTrust {
  constructor(
    private readonly file: string,
    private readonly workspace: string,
  ) {}

  static inStore(storeDir: string, workspace: string): FileTrust {
    return new FileTrust(path.join(storeDir, 'mcp-allowed.json'), workspace);
  }

  isAllowed(s: McpServerConfig): boolean {
    return this.read()[this.workspace]?.[s.name] === serverFingerprint(s);
  }

  /** The fingerprint the server named `name` was last allowed with here, if it ever was. */
  allowedAs(name: string): string | undefined {
    const v = this.read()[this.workspace]?.[name];
    return typeof v === 'string' ? v : undefined;
  }

  allowedBefore(name: string): boolean {
    return this.allowedAs(name) !== undefined;
  }

  async allow(s: McpServerConfig): Promise<void> {
    setInBook(this.file, this.workspace, s.name, serverFingerprint(s));
  }

  private read(): WorkspaceBook<string> {
    return readBook<string>(this.file);
  }
}

/** The extension's kind: allows kept in a key-value memory (workspaceState), same fingerprints. */
export class MemoryTrust implements McpTrust {
  constructor(
    private readonly get: () => Record<string, string> | undefined,
    private readonly put: (v: Record<string, string>) => Promise<void> | void,
  ) {}

  isAllowed(s: McpServerConfig): boolean {
    return this.get()?.[s.name] === serverFingerprint(s);
  }

  allowedBefore(name: string): boolean {
    return typeof this.get()?.[name] === 'string';
  }

  async allow(s: McpServerConfig): Promise<void> {
    await this.put({ ...this.get(), [s.name]: serverFingerprint(s) });
  }
}
