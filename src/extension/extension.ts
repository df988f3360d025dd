import * as path from 'node:path';
import * as vscode from 'vscode';
import { describeError } from '../core/errors';
import { COMMAND_IDS } from '../protocol';
import { BARE_GUARD_SETTING, BareRepoGuard, bareGuardWanted } from './bare-repo-guard';
import type { ArborHost } from './host';
import { statusBarView } from './presenter/status-bar';

// Activation stays cheap (measured, logged, and returned for tests): no store, runtime,
// sql.js or openai is loaded here — of src/core only pure helpers (error text, the status
// bar's spend and price formatting). The host bundle is required on the first action that needs it.

export interface ArborApi {
  activationMs: number;
  /** Loads the host (for tests and other extensions). */
  host(): Promise<ArborHost>;
}

export function activate(context: vscode.ExtensionContext): ArborApi {
  const t0 = performance.now();
  const log = vscode.window.createOutputChannel('Arbor', { log: true });
  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  status.command = 'arbor.chat.focus';
  ({ text: status.text, tooltip: status.tooltip } = statusBarView({}));
  status.show();

  // First, before any other extension's next git spawn (decision 0124); its listener comes
  // before the host's, so a setting change is applied when the host reports it applied.
  const bareGuard = new BareRepoGuard(context.environmentVariableCollection, log);
  guard = bareGuard;
  bareGuard.apply(bareGuardWanted());
  const guardChanged = vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration(BARE_GUARD_SETTING)) bareGuard.apply(bareGuardWanted());
  });

  let host: ArborHost | undefined;
  const logChanged = new vscode.EventEmitter<vscode.Uri>();
  const load = async (): Promise<ArborHost> => {
    if (host) return host;
    const t = performance.now();
    // A path esbuild does not follow: the host is its own bundle, loaded on demand.
    const mod = require(path.join(__dirname, 'host.js')) as typeof import('./host');
    host = mod.createHost(context, log, (counts, spend) => {
      const view = statusBarView(counts, spend);
      status.text = view.text;
      status.tooltip = view.tooltip;
    });
    host.logFeed.onDidChange((uri) => logChanged.fire(uri));
    log.info(`host loaded in ${(performance.now() - t).toFixed(1)} ms`);
    return host;
  };
  const report = (what: string) => (err: unknown) => {
    const text = describeError(err);
    log.error(`${what}: ${text}`);
    void vscode.window.showErrorMessage(`Arbor: ${text}`);
  };

  // Instruction and agent files (decision 0056): the panel's list follows edits without waiting for a request.
  const projectFiles = vscode.workspace.createFileSystemWatcher('**/{AGENTS.md,CLAUDE.md,.arbor/agents/*.md,.claude/agents/*.md}');
  const projectChanged = () => void host?.controller.projectChanged().catch(report('project files'));
  context.subscriptions.push(
    bareGuard,
    guardChanged,
    projectFiles,
    projectFiles.onDidChange(projectChanged),
    projectFiles.onDidCreate(projectChanged),
    projectFiles.onDidDelete(projectChanged),
    log,
    status,
    logChanged,
    vscode.window.registerWebviewViewProvider('arbor.chat', {
      resolveWebviewView: (view) => load().then((h) => h.attachPanel(view), report('opening the panel')),
    }),
    vscode.window.registerWebviewPanelSerializer('arbor.transcript', {
      deserializeWebviewPanel: async (panel, state: unknown) => {
        const id = (state as { sessionId?: unknown } | undefined)?.sessionId;
        if (typeof id !== 'string') {
          panel.dispose();
          return;
        }
        (await load()).adoptTranscript(panel, id);
      },
    }),
    vscode.workspace.registerTextDocumentContentProvider('arbor-log', {
      // Relayed from the host's feed once it is loaded (no log document is open before that).
      onDidChange: logChanged.event,
      provideTextDocumentContent: (uri) => load().then((h) => h.eventLog(uri)),
    }),
    ...COMMAND_IDS.map((name) =>
      vscode.commands.registerCommand(name, (args?: unknown) =>
        load()
          .then((h) => h.commands[name](args && typeof args === 'object' ? (args as Record<string, unknown>) : undefined))
          .catch(report(name)),
      ),
    ),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (host && e.affectsConfiguration('arbor')) void host.settingsChanged((key) => e.affectsConfiguration(key)).catch(report('settings'));
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void host?.settingsChanged().catch(report('workspace trust'))),
    { dispose: () => void host?.dispose() },
  );

  const activationMs = performance.now() - t0;
  log.info(`activated in ${activationMs.toFixed(1)} ms`);
  return { activationMs, host: load };
}

/** The one guard of this extension host's `process.env` (taken back at deactivation). */
let guard: BareRepoGuard | undefined;

export function deactivate(): void {
  // The rest is in context.subscriptions; the host closes its store there.
  guard?.dispose();
  guard = undefined;
}
