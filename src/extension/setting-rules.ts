// When a change to each `arbor.*` setting takes effect (issue 21.4, decision 0049). No vscode
// import: the table is plain data, checked against package.json by a unit test
// (test/extension/setting-rules.test.ts), and the host test that changes every setting in a
// running window (test/host/settings-live.test.ts) is a `Record<SettingKey, …>`, so a setting
// added to package.json without a row here fails a test, and a row without its check fails the build.

/** The path a live setting takes to the next action that reads it. */
export type LivePath =
  /** `Harness.setModel`: a new client; every agent's next request (running ones included). */
  | 'model'
  /** `Harness.setDefaults`: policy at the next tool call or command, a child's limits at its next start or release, a goal's at its next set. */
  | 'defaults'
  /** The workflow engine's deployment: read when the next run starts (runs under way keep theirs). */
  | 'workflow'
  /** `Harness.setPrices`: every cost reader at once, the tree re-sent. */
  | 'prices'
  /** `PanelSettings`: re-sent to the open panels. */
  | 'panel'
  /** `HookService.reload`: the settings files read again; the next hook that fires uses them (decision 0057). */
  | 'hooks'
  /** `harness.mcp.setServers`: servers added, changed or removed start or stop now (decision 0055). */
  | 'mcp'
  /** `harness.checkpoints.setEnabled`: recording follows from the next tool call (decision 0059). */
  | 'checkpoints'
  /** `BareRepoGuard` (extension.ts's own listener, the host need not be loaded): the next git any extension or new terminal starts (decision 0124). */
  | 'gitGuard';

/**
 * `live`: the next action uses the new value, through `via`. `reload`: the value is wired when
 * the harness opens, so a change is said once, with a Reload Window button (`ReloadPrompt`).
 */
export type SettingRule = { readonly applies: 'live'; readonly via: LivePath } | { readonly applies: 'reload' };

const live = <P extends LivePath>(via: P) => ({ applies: 'live', via }) as const;
/** The remote programs: each is a provider and a delegation tool in every request head, registered when the harness opens (decision 0038). */
const remote = { applies: 'reload' } as const;
/** The placements (decision 0071): wired into the harness config when it opens. */
const placements = { applies: 'reload' } as const;

/** Every setting in package.json `contributes.configuration`, in its order. */
export const SETTING_RULES = {
  'arbor.model.baseUrl': live('model'),
  'arbor.model.name': live('model'),
  'arbor.subagents.maxDepth': live('defaults'),
  'arbor.model.maxTokens': live('model'),
  'arbor.model.completionCapField': live('model'),
  'arbor.model.timeoutSeconds': live('model'),
  'arbor.policy.sandbox': live('defaults'),
  'arbor.policy.network': live('defaults'),
  'arbor.policy.approval': live('defaults'),
  'arbor.subagents.childApproval': live('defaults'),
  'arbor.subagents.maxConcurrent': live('defaults'),
  'arbor.subagents.releaseDelayMs': live('defaults'),
  'arbor.chat.examplePrompts': live('panel'),
  'arbor.goal.defaultMaxRounds': live('defaults'),
  'arbor.workflow.maxTotalAgents': live('workflow'),
  'arbor.workflow.concurrency': live('workflow'),
  'arbor.workflow.maxConcurrency': live('workflow'),
  'arbor.workflow.wallClockMinutes': live('workflow'),
  'arbor.workflow.allowUnconfinedScripts': live('workflow'),
  'arbor.prices': live('prices'),
  'arbor.hooks.readClaudeSettings': live('hooks'),
  'arbor.checkpoints.enabled': live('checkpoints'),
  'arbor.git.bareRepositoryExplicit': live('gitGuard'),
  'arbor.mcp.servers': live('mcp'),
  'arbor.mcp.allowTools': live('mcp'),
  'arbor.remote.codex.command': remote,
  'arbor.remote.codex.model': remote,
  'arbor.remote.codex.env': remote,
  'arbor.remote.codex.home': remote,
  'arbor.remote.codex.overrides': remote,
  'arbor.remote.claudeCode.command': remote,
  'arbor.remote.claudeCode.model': remote,
  'arbor.remote.claudeCode.env': remote,
  'arbor.remote.claudeCode.home': remote,
  'arbor.remote.dshSdk.command': remote,
  'arbor.remote.dshSdk.model': remote,
  'arbor.remote.dshSdk.baseUrl': remote,
  'arbor.remote.dshSdk.env': remote,
  'arbor.remote.dshSdk.home': remote,
  'arbor.remote.acp': remote,
  'arbor.remote.idleTimeoutSeconds': remote,
  'arbor.remote.turnTimeoutMinutes': remote,
  'arbor.placements': placements,
} as const satisfies Record<`arbor.${string}`, SettingRule>;

export type SettingKey = keyof typeof SETTING_RULES;
export const SETTING_KEYS = Object.keys(SETTING_RULES) as SettingKey[];

/** The order live paths are applied in: the model first (the panel shows which model answers). */
export const LIVE_PATHS: readonly LivePath[] = ['model', 'defaults', 'workflow', 'prices', 'panel', 'hooks', 'mcp', 'checkpoints', 'gitGuard'];

/** What a change touched: the live paths to apply and the reload-only settings it named. */
export function changedBy(affects: (key: SettingKey) => boolean): { paths: Set<LivePath>; reload: SettingKey[]; keys: SettingKey[] } {
  const keys = SETTING_KEYS.filter(affects);
  const paths = new Set<LivePath>();
  const reload: SettingKey[] = [];
  for (const k of keys) {
    const rule: SettingRule = SETTING_RULES[k];
    if (rule.applies === 'live') paths.add(rule.via);
    else reload.push(k);
  }
  return { paths, reload, keys };
}
