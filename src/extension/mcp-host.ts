import * as vscode from 'vscode';
import type { Harness } from '../core/harness';
import { describeConfigError, merge, parseServerMap, readWorkspaceServers } from '../core/mcp/config';
import type { McpDeployment } from '../core/mcp/deployment';
import type { McpServerState } from '../core/mcp/state';
import { MemoryTrust } from '../core/mcp/trust-file';

// The extension's side of MCP (decision 0055): servers from the workspace's `.mcp.json` and
// `.vscode/mcp.json` plus the user's `arbor.mcp.servers`; workspace servers start only in a
// trusted workspace and only once the user allowed each (a notification asks, once per window and
// command line; the allow is kept in workspaceState with a fingerprint of what the server runs, so
// a server changed since is asked about again, saying so). The files are watched: an edit reaches
// the running harness.

const ALLOWED_KEY = 'arbor.mcp.allowed';

export class McpHost implements vscode.Disposable {
  private readonly asked = new Set<string>();
  private readonly disposables: vscode.Disposable[] = [];
  private folders: readonly string[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** What the harness opens with (and re-reads on a file edit or a trust grant). */
  deployment(folders: readonly string[]): McpDeployment {
    const c = vscode.workspace.getConfiguration('arbor');
    const root = folders[0];
    const user = parseServerMap(c.get<unknown>('mcp.servers', {}), 'user', 'setting arbor.mcp.servers', 'arbor.mcp.servers', {
      workspaceFolder: root ?? '',
      env: process.env,
    });
    const read = merge([user, root ? readWorkspaceServers(root) : { servers: [], errors: [] }]);
    for (const e of read.errors) this.log.warn(describeConfigError(e));
    return {
      servers: read.servers,
      errors: read.errors,
      allowTools: c.get<string[]>('mcp.allowTools', []),
      workspaceTrusted: vscode.workspace.isTrusted,
      trust: new MemoryTrust(
        () => this.context.workspaceState.get<Record<string, string>>(ALLOWED_KEY),
        async (v) => {
          await this.context.workspaceState.update(ALLOWED_KEY, v);
        },
      ),
    };
  }

  /** Ask for the servers that wait for an allow; follow edits of the config files and a trust grant. */
  follow(h: Harness, folders: readonly string[]): void {
    const ask = () => {
      if (!vscode.workspace.isTrusted) return;
      for (const s of h.mcp.states()) {
        // Asked once per window for each thing a name runs: a server changed since (a pull, an edit) is asked about again.
        const key = `${s.name}\0${h.mcp.runs(s.name) ?? ''}`;
        if (s.phase !== 'needs-allow' || this.asked.has(key)) continue;
        this.asked.add(key);
        void this.prompt(h, s);
      }
    };
    this.disposables.push({ dispose: h.observe((c) => c.type === 'mcp' && ask()) });
    this.folders = folders;
    const reread = () => this.reread(h);
    if (folders[0]) {
      const w = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(folders[0], '{.mcp.json,.vscode/mcp.json}'));
      this.disposables.push(w, w.onDidChange(reread), w.onDidCreate(reread), w.onDidDelete(reread));
    }
    this.disposables.push(vscode.workspace.onDidGrantWorkspaceTrust(reread));
    for (const s of h.mcp.states()) if (s.phase === 'failed') this.log.warn(`MCP server "${s.name}" failed: ${s.why ?? 'no reason given'}`);
    ask();
  }

  /** Settings or files changed: servers added, changed or removed start or stop now (the settings' live path). */
  reread(h: Harness | undefined): void {
    h?.mcp.setServers(this.deployment(this.folders));
  }

  private async prompt(h: Harness, s: McpServerState): Promise<void> {
    const pick = await vscode.window.showInformationMessage(
      // What it runs is in the question: a file an agent or a repository wrote names the server, the human sees its command.
      `Arbor: this workspace defines the MCP server "${s.name}" (${s.file ?? 'a workspace file'}), which runs: ${h.mcp.runs(s.name) ?? 'unknown'}.${s.changedSinceAllowed ? ' What it runs changed since you allowed it.' : ''} Allow it to start? It runs with your rights, outside Arbor's sandbox; its tool calls still ask first.`,
      'Allow',
      'Not Now',
    );
    if (pick !== 'Allow') return;
    try {
      const after = await h.mcp.allow(s.name);
      this.log.info(`MCP server "${s.name}" allowed for this workspace (${after.phase})`);
    } catch (e) {
      void vscode.window.showErrorMessage(`Arbor: MCP server "${s.name}" could not be allowed: ${(e as Error).message}`);
    }
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
