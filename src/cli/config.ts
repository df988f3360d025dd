import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { checkPriceOverrides, type ModelPrice, PriceError } from '../core/cost/prices';
import type { HarnessConfig } from '../core/harness';
import { CAP_FIELD_SETTINGS } from '../core/model/cap-field';
import { DEFAULT_BASE_URL, DEFAULT_MODEL, envApiKey, isLocalUrl } from '../core/model/endpoint';
import { autoApprove, neverApprove } from '../core/policy/approval';
import { SANDBOX_MODES } from '../core/policy/sandbox';
import { userProjectFiles } from '../core/project/project-files';
import { programReadNames } from '../core/remote/program-reads';
import { type Budget, BudgetInputError, parseBudgetText } from '../core/session/budget';
import type { SandboxMode } from '../core/session/events';
import { describeMade, MADE_RECORD_NAME, MadeRecord } from '../core/tools/made-by-commands';
import { oneOf, type ParsedArgs, positiveInt, UsageError } from './args';
import { readConfigFile } from './config-file';
import { mcpDeployment } from './mcp';
import { placementsFromConfig } from './placement-config';
import { remoteFromConfig } from './remote-config';

export { DEFAULT_BASE_URL, DEFAULT_MODEL };

/** A CLI process leaves a journal smaller than this unfolded at exit (StoreOptions.closeFoldsFrom). */
export const CLOSE_FOLDS_FROM = 128 * 1024;

/** API key from ARBOR_API_KEY, else DEEPSEEK_API_KEY / OPENAI_API_KEY. Local servers need none. */
export function apiKeyFor(baseURL: string, env: NodeJS.ProcessEnv): string {
  const key = envApiKey(env);
  if (key) return key;
  if (isLocalUrl(baseURL)) return 'local';
  throw new UsageError(`No API key for ${baseURL}. Set ARBOR_API_KEY (or DEEPSEEK_API_KEY / OPENAI_API_KEY), or point --base-url at a local server.`);
}

export function storeDirOf(args: ParsedArgs, env: NodeJS.ProcessEnv): string {
  const s = args.options.get('store');
  if (typeof s === 'string') return path.resolve(s);
  if (env.ARBOR_STORE) return path.resolve(env.ARBOR_STORE);
  return path.resolve(workspaceOf(args), '.arbor', 'store');
}

export function workspaceOf(args: ParsedArgs): string {
  const w = args.options.get('workspace');
  return path.resolve(typeof w === 'string' ? w : process.cwd());
}

/** The user's record of protected folders commands made (decision 0111): in the home folder, which no command can write. */
export function madeRecord(): MadeRecord {
  return new MadeRecord(path.join(os.homedir(), '.arbor', MADE_RECORD_NAME));
}

/**
 * The CLI trusts the folder it runs in (its hooks, its store's MCP allows, its agents, what the
 * programs it starts there read): not one whose `.arbor`, `.claude`, `.vscode`, `.mcp.json`, a
 * configured program's names (`programs`: `programReadNames`) or repository a confined command made
 * (decision 0111, amended in s56).
 */
export function refuseMadeByCommand(folder: string, storeDir?: string, programs: readonly string[] = []): void {
  const record = madeRecord();
  const made = record.madeIn(folder, programs);
  if (made.length > 0) throw new UsageError(`${describeMade(folder, made)} (MADE_BY_COMMAND)`);
  // The store's `.arbor` the CLI is about to make is its own: trusted now, so a session running
  // commands above this folder meanwhile, whose walk would see it appear, does not count it as theirs.
  const own = path.join(folder, '.arbor');
  if (storeDir && path.dirname(storeDir) === own && !fs.existsSync(own)) {
    try {
      // Not recursive: one a command made between the look and here fails EEXIST, and is not trusted.
      fs.mkdirSync(own);
    } catch {
      return;
    }
    try {
      record.trustOwn(own);
    } catch {
      // A home folder that cannot be written: a walk beside may record it, and the next run says how to trust it.
    }
  }
}

/**
 * `run`, `send` and `goal`, which drive turns: an explicit `--sandbox` is also the widest anything
 * of this process runs under, a session's own earlier switch (made in `arbor acp` or the panel on
 * this store) included — `arbor send --sandbox read-only` never runs a session switched to
 * full-access unconfined (decision 0125). Without the flag a session's switch holds, as before.
 * `arbor acp` does not use it: there the client switches modes.
 */
export function turnConfig(args: ParsedArgs, env: NodeJS.ProcessEnv): HarnessConfig {
  const config = harnessConfig(args, env);
  if (!args.options.has('sandbox')) return config;
  refusePastTheCeiling(args, config.sandbox);
  return { ...config, ceiling: { sandbox: config.sandbox, by: 'cli-sandbox' } };
}

/** Flags that would run something outside the OS sandbox: with an explicit narrower `--sandbox` they contradict it (decision 0125, amended in s60). */
const PAST_THE_SANDBOX: Readonly<Record<string, string>> = {
  'unconfined-workflows': 'runs workflow scripts as plain processes, outside any OS sandbox, where none can start',
};

/** An explicit `--sandbox` narrower than full-access with a flag that reaches past it: a usage error, not one of them silently. */
function refusePastTheCeiling(args: ParsedArgs, sandbox: SandboxMode): void {
  if (sandbox === 'full-access') return;
  for (const [flag, what] of Object.entries(PAST_THE_SANDBOX))
    if (args.options.has(flag))
      throw new UsageError(
        `FLAGS_CONFLICT: --${flag} with --sandbox ${sandbox}. An explicit --sandbox ${sandbox} is the widest this process runs anything under, ` +
          `and --${flag} ${what}. Drop --${flag}, or give --sandbox full-access (or no --sandbox) if you mean to run it.`,
      );
}

/** Everything `run` and `send` need, from flags and environment. */
export function harnessConfig(args: ParsedArgs, env: NodeJS.ProcessEnv): HarnessConfig {
  const baseURL = (args.options.get('base-url') as string | undefined) ?? env.ARBOR_BASE_URL ?? DEFAULT_BASE_URL;
  // Flags first, so a typo is reported before anything about keys or folders.
  const approval = oneOf('approval', args.options.get('approval'), ['never', 'auto'] as const, 'never');
  const sandbox = oneOf('sandbox', args.options.get('sandbox'), SANDBOX_MODES, 'workspace-write');
  const maxTokens = positiveInt('max-tokens', args.options.get('max-tokens'));
  const capField = oneOf('cap-field', args.options.get('cap-field'), CAP_FIELD_SETTINGS, 'auto');
  const timeoutMs = positiveInt('timeout', args.options.get('timeout'));
  const maxSteps = positiveInt('max-steps', args.options.get('max-steps'));
  const maxConcurrentChildren = positiveInt('max-children', args.options.get('max-children'));
  const prices = pricesOf(args, env);
  // The user's config file, read once for both of its readers.
  const configFile = readConfigFile(args, env);
  const remote = remoteFromConfig(args, env, configFile);
  const placements = placementsFromConfig(args, env, configFile);
  const storeDir = storeDirOf(args, env);
  refuseMadeByCommand(workspaceOf(args), storeDir, programReadNames(remote));
  return {
    storeDir,
    // One process per command: the journals a run leaves are small, and the next open replays
    // them (decision 0085); folding each at every exit was two fsyncs and a rename per file.
    store: { closeFoldsFrom: CLOSE_FOLDS_FROM },
    workspace: [workspaceOf(args)],
    model: {
      baseURL,
      name: (args.options.get('model') as string | undefined) ?? env.ARBOR_MODEL ?? DEFAULT_MODEL,
      apiKey: apiKeyFor(baseURL, env),
      maxTokens,
      timeoutMs,
      capField,
    },
    sandbox,
    approval: approval === 'auto' ? 'ask' : 'never',
    approvalPort: approval === 'auto' ? autoApprove : neverApprove,
    maxSteps,
    ...(maxConcurrentChildren !== undefined ? { maxConcurrentChildren } : {}),
    commands: { network: args.options.has('network'), ...(env.ARBOR_BWRAP ? { bwrapPath: env.ARBOR_BWRAP } : {}), madeRecord: madeRecord().file },
    ...(args.options.has('unconfined-workflows') ? { workflow: { allowUnconfined: true } } : {}),
    ...(prices ? { prices } : {}),
    ...(remote ? { remote } : {}),
    ...(placements ? { placements } : {}),
    mcp: mcpDeployment(args, env, storeDir, workspaceOf(args)),
    // The user's own instructions and agents (decision 0056); $ARBOR_USER_DIR moves the folder.
    project: userProjectFiles(env.ARBOR_USER_DIR ?? path.join(os.homedir(), '.arbor')),
    ...(args.options.has('no-hooks') ? {} : { hooks: hooksOf(args, env) }),
    ...(args.options.has('no-checkpoints') ? { checkpoints: { enabled: false } } : {}),
  };
}

/**
 * Hooks (decision 0057): the user's file (`--hooks-file FILE`, else `$ARBOR_USER_SETTINGS`, else
 * `~/.arbor/settings.json`), the workspace's `.arbor/settings.json`, and with `--claude-hooks` its
 * `.claude/settings.json`. The folder the CLI runs in counts as trusted, as `claude -p` treats it.
 */
export function hooksOf(args: ParsedArgs, env: NodeJS.ProcessEnv): NonNullable<HarnessConfig['hooks']> {
  const file = args.options.get('hooks-file');
  if (file === true) throw new UsageError('--hooks-file needs a settings file (JSON with a "hooks" key)');
  const userFile = file ?? env.ARBOR_USER_SETTINGS ?? path.join(os.homedir(), '.arbor', 'settings.json');
  return { workspaceRoot: workspaceOf(args), userFile: path.resolve(userFile), readClaudeSettings: args.options.has('claude-hooks'), trusted: () => true };
}

/**
 * Price overrides from `--prices FILE` or `$ARBOR_PRICES` (a JSON file: model → {input, cacheHit,
 * output} in USD per million tokens, or null to remove a default); decision 0033.
 */
export function pricesOf(args: ParsedArgs, env: NodeJS.ProcessEnv): Record<string, ModelPrice | null> | undefined {
  const file = args.options.get('prices') ?? env.ARBOR_PRICES;
  if (file === undefined || file === '') return undefined;
  if (file === true) throw new UsageError('--prices needs a JSON file');
  let data: unknown;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(`--prices ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    return checkPriceOverrides(data, path.basename(file));
  } catch (err) {
    if (err instanceof PriceError) throw new UsageError(err.message);
    throw err;
  }
}

/** `--budget "50k, $2"`: the budget for the session's subtree (decision 0034); absent: none given. */
export function budgetOf(args: ParsedArgs): Budget | null | undefined {
  const v = args.options.get('budget');
  if (v === undefined) return undefined;
  if (v === true) throw new UsageError('--budget needs an amount, e.g. --budget 50000 or --budget "$2" or --budget "50k, $2"');
  try {
    return parseBudgetText(v);
  } catch (err) {
    if (err instanceof BudgetInputError) throw new UsageError(`--budget: ${err.message}`);
    throw err;
  }
}
