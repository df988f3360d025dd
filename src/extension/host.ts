import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { describeError } from '../core/errors';
import { Harness, type HarnessConfig, type ModelConfig } from '../core/harness';
import { RESTRICTED_CEILING } from '../core/policy/sandbox';
import { userProjectFiles } from '../core/project/project-files';
import { recoveryNotes } from '../core/recovered-work';
import { describePidNamespace, pidNamespace } from '../core/remote/pid-namespace';
import { programReadNames } from '../core/remote/program-reads';
import type { RemoteSettings } from '../core/remote/settings';
import { setSqlJsWasmDir } from '../core/store/sqljs';
import { describeMade, MADE_RECORD_NAME, MadeRecord } from '../core/tools/made-by-commands';
import { describeSandboxStatus, type SandboxStatus } from '../core/tools/sandbox/detect';
import type { CommandId, ModelSource, PanelSettings, SpendView } from '../protocol';
import { ApprovalNotifier } from './approval-notifier';
import { pickWays } from './bestof-picks';
import type { CommandHost } from './command-host';
import { buildCommands, type Command } from './commands';
import { PanelController } from './controller';
import { EventLogFeed, logSessionId } from './event-log';
import { McpHost } from './mcp-host';
import { readModelConfig, SECRET_KEY } from './model-config';
import { pickPolicy } from './policy-picker';
import { SaidOnce } from './policy-settings';
import type { StatusCounts } from './presenter/status-bar';
import { ReloadPrompt } from './reload-prompt';
import { changedBy, LIVE_PATHS, type LivePath, type SettingKey } from './setting-rules';
import { type ArborSettings, readPlacementsSetting, readRemote, readSettings } from './settings';
import { Webviews } from './webviews';
import { disposeWorktreeReviews, openWorktreeReview } from './worktree-review';

export { DEMO_URL_ENV, SECRET_KEY } from './model-config';
export { TRANSCRIPT_VIEW } from './webviews';

/**
 * Everything heavy, loaded on first use (never at activation): the harness with its store
 * in workspace storage, the panel controller, transcript tabs and the raw event log.
 */
export class ArborHost implements CommandHost {
  readonly controller: PanelController;
  private harness: Promise<Harness> | undefined;
  /** The side panel and the transcript tabs (`webviews.ts`). */
  private readonly webviews: Webviews;
  private source: ModelSource = 'none';
  /** Whether commands run in an OS sandbox here; probed once, when the harness opens. */
  private sandbox: SandboxStatus | undefined;
  private readonly notifier: ApprovalNotifier;
  readonly commands: Record<CommandId, Command>;
  /** Open raw event log documents follow their session (onDidChange). */
  readonly logFeed = new EventLogFeed();
  /** The remote programs are wired when the harness opens: a change asks for a reload, once. */
  readonly reloadPrompt: ReloadPrompt;
  private readonly applied = new vscode.EventEmitter<readonly SettingKey[]>();
  /** Fired once a settings change has been applied (with the settings it touched), for tests and other extensions. */
  readonly onDidApplySettings = this.applied.event;
  /** MCP servers: the workspace's and the user's, the allow prompt, file watching (decision 0055). */
  private readonly mcp: McpHost;
  /** Workspace values of `arbor.policy.*` wider than the user's: said once each (decision 0125, amended). */
  private readonly ignoredPolicy = new SaidOnce();

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly log: vscode.LogOutputChannel,
    private readonly onStatusCounts: (counts: StatusCounts, spend?: SpendView) => void,
  ) {
    setSqlJsWasmDir(path.join(context.extensionUri.fsPath, 'dist'));
    this.controller = new PanelController(() => this.getHarness(), {
      settings: () => this.panelSettings(),
      openTranscript: (id) => this.openTranscript(id),
      log: (level, text) => this.log[level](text),
      progress: (title, work) => Promise.resolve(vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, work)),
      runCommand: async (command) => {
        if (command === 'setApiKey') await vscode.commands.executeCommand('arbor.setApiKey' satisfies CommandId);
        else await vscode.commands.executeCommand('workbench.action.openSettings', 'arbor.model');
      },
      approvalsChanged: (pending, added) => {
        this.notifier.changed(pending, added);
        this.onStatus(this.controller.statusCounts());
      },
      pickPolicy: (id) => void pickPolicy(this, id).catch((err: unknown) => this.log.error(`policy picker: ${describeError(err)}`)),
      statusChanged: () => this.onStatus(this.controller.statusCounts()),
      reviewWorktree: (id, name, files) => openWorktreeReview(id, name, files),
      confirmProtected: async (name, paths) =>
        (await vscode.window.showWarningMessage(
          `${name} ran on another machine and changed ${paths.join(', ')}: files that configure VS Code, git or Arbor (a task can run when the folder opens). Nobody here approved those writes. Apply them too?`,
          { modal: true },
          'Apply Them Too',
        )) === 'Apply Them Too',
      pickWays: (q) => pickWays(q),
      pickBudget: (id) =>
        void this.commands['arbor.setBudget']({ arborSessionId: id }).catch(
          (err: unknown) => void vscode.window.showErrorMessage(`Arbor: ${describeError(err)}`),
        ),
    });
    this.notifier = new ApprovalNotifier(
      (requestId, reply) => this.controller.answer(requestId, reply),
      (id) => this.controller.knownName(id) ?? id,
    );
    this.webviews = new Webviews(context.extensionUri, this.controller, this.notifier);
    this.commands = buildCommands(this);
    this.reloadPrompt = new ReloadPrompt(() => JSON.stringify([readRemote().remote ?? {}, readPlacementsSetting().placements ?? []]), log);
    this.mcp = new McpHost(context, log);
  }

  /** The status bar: the tree's status counts and every conversation's spend (the one fold). */
  private onStatus(counts: StatusCounts): void {
    this.onStatusCounts(counts, this.controller.totalSpend());
  }

  /** The harness, created on first need: store under workspace storage, key from SecretStorage. */
  getHarness(): Promise<Harness> {
    this.harness ??= this.createHarness().catch((err: unknown) => {
      this.harness = undefined;
      throw err;
    });
    return this.harness;
  }

  /** The model the settings and the key ask for, read fresh each time (`model-config.ts`); the panel says where it comes from. */
  private async modelConfig(): Promise<ModelConfig> {
    const { model, source } = await readModelConfig(this.context.secrets);
    this.source = source;
    return model;
  }

  private async createHarness(): Promise<Harness> {
    const s = readSettings();
    this.sayIgnoredPolicy(s);
    const storeDir = this.context.storageUri
      ? path.join(this.context.storageUri.fsPath, 'store')
      : path.join(this.context.globalStorageUri.fsPath, 'no-folder', 'store');
    await fs.promises.mkdir(storeDir, { recursive: true });
    const folders = vscode.workspace.workspaceFolders?.map((f) => f.uri.fsPath) ?? [];
    const workspace = folders.length > 0 ? folders : [path.dirname(storeDir)];
    const restricted = !vscode.workspace.isTrusted;
    // Remote programs: the user's machine-scoped settings only, none in Restricted Mode.
    const { remote, problems } = readRemote();
    for (const p of problems) this.log.warn(p);
    // Placements (decision 0071): the same rule, machine-scoped, none in Restricted Mode.
    const placed = readPlacementsSetting();
    for (const p of placed.problems) this.log.warn(p);
    // A folder whose `.arbor` or `.claude` a confined command made, or what a configured program
    // reads there (`.codex` with Codex: decision 0111, amended in s56): said, and its hooks are not loaded.
    const made = new MadeRecord(path.join(os.homedir(), '.arbor', MADE_RECORD_NAME));
    const madeIn = folders.length > 0 ? made.madeIn(workspace[0], programReadNames(remote)) : [];
    if (madeIn.length > 0) {
      const text = `Arbor: ${describeMade(workspace[0], madeIn)}. Its hooks are not run (MADE_BY_COMMAND).`;
      this.log.warn(text);
      void vscode.window.showWarningMessage(text);
    }
    const config: HarnessConfig = {
      storeDir,
      workspace,
      model: await this.modelConfig(),
      // Restricted Mode: read-only, and nothing that needs approval (commands) can run — a
      // ceiling, so a session's own earlier switch (full-access, ask) does not lift it.
      sandbox: restricted ? 'read-only' : s.sandbox,
      approval: restricted ? 'never' : s.approval,
      ...(restricted ? { ceiling: { ...RESTRICTED_CEILING } } : {}),
      approvalPort: this.controller,
      maxDepth: s.maxDepth,
      childApproval: s.childApproval,
      releaseDelayMs: s.releaseDelayMs,
      maxConcurrentChildren: s.maxConcurrent,
      commands: { network: s.network, madeRecord: made.file },
      goalMaxRounds: s.goalMaxRounds,
      workflow: s.workflow,
      prices: s.prices,
      ...(remote ? { remote } : {}),
      ...(placed.placements ? { placements: placed.placements } : {}),
      // The user's own instructions and agents (decision 0056).
      project: userProjectFiles(path.join(os.homedir(), '.arbor')),
      // Hooks run outside the sandbox: the workspace's files only while it is trusted (read at each firing).
      hooks: {
        workspaceRoot: workspace[0],
        userFile: path.join(os.homedir(), '.arbor', 'settings.json'),
        readClaudeSettings: s.hooksReadClaude,
        trusted: () => vscode.workspace.isTrusted && madeIn.length === 0,
      },
      // Worktrees run git with the repository's own configuration: only while the workspace is trusted.
      trusted: () => vscode.workspace.isTrusted,
      mcp: this.mcp.deployment(folders),
      checkpoints: { enabled: s.checkpoints },
    };
    this.reloadPrompt.opened();
    if (remote) {
      this.log.info(`remote programs: ${describeRemote(remote)}`);
      // Said once: whether what a program starts dies with it (decision 0036).
      const ns = await pidNamespace();
      this.log[ns.available ? 'info' : 'warn'](describePidNamespace(ns));
    }
    if (s.pricesError) this.log.warn(`${s.pricesError} The default prices apply until it is fixed.`);
    const t0 = Date.now();
    const h = await Harness.open(config);
    this.log.info(`store opened at ${storeDir} in ${Date.now() - t0} ms (${h.store.list().length} sessions)`);
    for (const p of h.store.problems) this.log.warn(`${p.file} was moved aside to ${p.movedTo}: ${p.reason}`);
    // Said once: work a crash cut that this open finished or recorded (a rewind, a worktree apply).
    for (const note of recoveryNotes(h.recoveredWork)) {
      this.log.warn(note);
      void vscode.window.showWarningMessage(note);
    }
    // Said once: where no OS sandbox can start, every command asks (or is refused under never).
    this.sandbox = await h.sandboxStatus();
    // Said once: without git there are no checkpoints (nothing else changes).
    const noCheckpoints = await h.checkpoints.notice();
    if (noCheckpoints) {
      this.log.warn(noCheckpoints);
      void vscode.window.showWarningMessage(noCheckpoints);
    }
    if (this.sandbox.available) this.log.info(describeSandboxStatus(this.sandbox));
    else this.log.warn(`${describeSandboxStatus(this.sandbox)}. Until then every command needs your approval.`);
    this.controller.settingsChanged();
    this.mcp.follow(h, folders);
    // The count changes when a turn starts, when usage arrives, and with every live change (an
    // agent went idle, was queued, asked for approval): one subscription to the change stream.
    h.observe((c) => {
      if (c.type === 'event') {
        if (c.event.type === 'turn/start' || c.event.type === 'assistant/message') this.onStatus(this.controller.statusCounts());
        this.logFeed.changed(c.sessionId);
      } else if (c.type === 'live') this.onStatus(this.controller.statusCounts());
    });
    return h;
  }

  /** A workspace's wider sandbox, approval or network, ignored: said in the log once per value and place. */
  private sayIgnoredPolicy(s: ArborSettings): void {
    for (const line of this.ignoredPolicy.fresh(s.policyIgnored)) this.log.warn(line);
  }

  panelSettings(): PanelSettings {
    const s = readSettings();
    const restricted = !vscode.workspace.isTrusted;
    const model = this.source === 'demo' ? 'arbor-demo (bundled demo)' : s.model;
    return {
      sandbox: restricted ? 'read-only' : s.sandbox,
      approval: restricted ? 'never' : s.approval,
      restricted,
      hasApiKey: this.source !== 'none',
      modelSource: this.source,
      model,
      ...(this.sandbox ? { osSandbox: { active: this.sandbox.available, detail: describeSandboxStatus(this.sandbox), network: s.network } } : {}),
      ...(s.examplePrompts.length ? { examplePrompts: s.examplePrompts } : {}),
    };
  }

  /**
   * Settings, the key or trust changed (`affects`: which settings; all of them by default).
   * Nothing is closed: each live path of SETTING_RULES applies what it carries to the next
   * action that reads it; the reload-only settings ask for a window reload, once per change.
   */
  async settingsChanged(affects: (key: SettingKey) => boolean = () => true): Promise<void> {
    const { paths, reload, keys } = changedBy(affects);
    const h = await this.harness?.catch(() => undefined);
    for (const path of LIVE_PATHS) if (paths.has(path)) await this.apply[path](h);
    if (h) this.reloadPrompt.changed(reload);
    this.controller.settingsChanged();
    this.applied.fire(keys);
  }

  /** How each live path reaches the harness (a table: SETTING_RULES names the path of every setting). */
  private readonly apply: Record<LivePath, (h: Harness | undefined) => Promise<void> | void> = {
    model: async (h) => {
      const model = await this.modelConfig();
      if (h) h.setModel(model);
      this.log.info(
        `model settings applied (${this.source === 'endpoint' ? `${'baseURL' in model ? model.baseURL : ''} ${model.name}` : this.source}); they take effect at each agent's next request`,
      );
    },
    defaults: (h) => {
      const p = this.panelSettings();
      const s = readSettings();
      this.sayIgnoredPolicy(s);
      h?.setDefaults({
        sandbox: p.sandbox,
        approval: p.approval,
        ceiling: p.restricted ? { ...RESTRICTED_CEILING } : null,
        childApproval: s.childApproval,
        maxDepth: s.maxDepth,
        releaseDelayMs: s.releaseDelayMs,
        maxConcurrentChildren: s.maxConcurrent,
        network: s.network,
        goalMaxRounds: s.goalMaxRounds,
      });
    },
    // The hooks' files are read again: the next hook that fires uses what they say now.
    hooks: (h) => {
      const problems = h?.hookService?.reload({ readClaudeSettings: readSettings().hooksReadClaude }) ?? [];
      for (const p of problems) this.log.warn(p);
    },
    // The engine reads its limits when a run starts: runs under way keep theirs, the next one gets these.
    workflow: (h) => {
      h?.setDefaults({ workflow: readSettings().workflow });
    },
    prices: async (h) => {
      const s = readSettings();
      if (s.pricesError) this.log.warn(`${s.pricesError} The default prices apply until it is fixed.`);
      if (h && JSON.stringify(s.prices) !== JSON.stringify(h.config.prices ?? {})) {
        h.setPrices(s.prices);
        await this.controller.pricesChanged();
      }
    },
    // Every change re-sends the panel its settings (settingsChanged, last): the example prompts need nothing more.
    panel: () => undefined,
    mcp: (h) => this.mcp.reread(h),
    checkpoints: (h) => h?.checkpoints.setEnabled(readSettings().checkpoints),
    // extension.ts's listener, registered before the host's, has applied it (decision 0124).
    gitGuard: () => undefined,
  };

  async setApiKey(key: string): Promise<void> {
    await this.context.secrets.store(SECRET_KEY, key);
    await this.settingsChanged((k) => k.startsWith('arbor.model.'));
  }

  attachPanel(view: vscode.WebviewView): void {
    this.webviews.attachPanel(view);
  }

  openTranscript(sessionId: string): void {
    this.webviews.openTranscript(sessionId);
  }

  /** A transcript tab restored after a window reload (WebviewPanelSerializer). */
  adoptTranscript(panel: vscode.WebviewPanel, sessionId: string): void {
    this.webviews.adoptTranscript(panel, sessionId);
  }

  /** The raw event log of a session as read-only JSON Lines (`arbor-log:/<id>.jsonl`). */
  async eventLog(uri: vscode.Uri): Promise<string> {
    const id = logSessionId(uri);
    const events = await this.controller.events(id);
    return `${events.map((e) => JSON.stringify(e)).join('\n')}\n`;
  }

  async dispose(): Promise<void> {
    await this.controller.dispose();
    this.logFeed.dispose();
    this.reloadPrompt.dispose();
    disposeWorktreeReviews();
    this.mcp.dispose();
    this.applied.dispose();
    const h = await this.harness?.catch(() => undefined);
    await h?.close();
  }
}

/** `codex (codex, model gpt-5.5), claudeCode (claude)` for the log. */
function describeRemote(remote: RemoteSettings): string {
  return Object.entries(remote)
    .map(([k, p]) => `${k} (${p.command}${p.model ? `, model ${p.model}` : ''})`)
    .join(', ');
}

export function createHost(
  context: vscode.ExtensionContext,
  log: vscode.LogOutputChannel,
  onStatus: (counts: StatusCounts, spend?: SpendView) => void,
): ArborHost {
  return new ArborHost(context, log, onStatus);
}
