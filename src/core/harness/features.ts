import { checkpointRow } from '../checkpoint/row';
import type { CheckpointService } from '../checkpoint/service';
import type { CostService } from '../cost/service';
import type { FeatureHooks, FeatureRow, RowContext } from '../feature/rows';
import type { GoalService } from '../goal/service';
import { goalRow } from '../goal/wire';
import type { HookService } from '../hooks/service';
import { hooksRow } from '../hooks/wire';
import type { McpManager } from '../mcp/manager';
import { mcpRow } from '../mcp/row';
import { placementRow } from '../placement/row';
import { createTransport } from '../placement/transports';
import { remoteRow } from '../remote/wire';
import type { CommandSandbox } from '../tools/sandbox/command-sandbox';
import { arborVersion } from '../version';
import { type WorkflowWiring, workflowRow } from '../workflow/wire';
import type { HarnessConfig } from './config';
import { composeHooks, delegationRow, promptRow, workspaceRow } from './rows';

/** The services the feature rows return, and their hooks composed into one. */
export interface Features {
  workflows: WorkflowWiring;
  goals: GoalService;
  hookService?: HookService;
  mcp: McpManager;
  checkpoints: CheckpointService;
  hooks: ReturnType<typeof composeHooks>;
}

/**
 * Wires the deployment's rows in order — tool sets, prompt sections, delegation, the remote
 * providers, the placements, workflows, goals, hooks, MCP, checkpoints, then the config's own rows — and
 * composes their hooks (they close in reverse: goals before workflows, decision 0030).
 */
export function wireFeatures(
  config: HarnessConfig,
  ctx: RowContext,
  parts: { roots: readonly string[]; cost: CostService; commandSandbox: CommandSandbox },
): Features {
  const { roots, cost, commandSandbox } = parts;
  const hooks: FeatureHooks[] = [];
  const wire = <S>(row: FeatureRow<S>): S => {
    const out = row.wire(ctx);
    if (out.hooks) hooks.push(out.hooks);
    return out.service;
  };
  // The config object is the live one: `setModel` reaches the secrets and the remote model at their next use.
  const runCommand = { sandbox: commandSandbox, secrets: () => ('apiKey' in config.model ? [config.model.apiKey] : []) };
  wire(workspaceRow({ runCommand }));
  wire(promptRow);
  wire(delegationRow);
  // The network setting is read at each remote turn, like a command's: a program never gets it when commands have not.
  if (config.remote)
    wire(
      remoteRow(
        config.remote,
        runCommand.secrets,
        () => ({ ...config.model }),
        undefined,
        () => config.commands?.network ?? false,
      ),
    );
  // Placements (decision 0074): a provider `placed:<name>` each; the key goes only where a placement says `passApiKey`.
  if (config.placements?.length) {
    const apiKey = () => ('apiKey' in config.model ? config.model.apiKey : undefined);
    const version = config.version ?? arborVersion();
    wire(
      placementRow(
        config.placements.map((s) => createTransport(s, { version, apiKey })),
        runCommand.secrets,
      ),
    );
  }
  const workflows = wire(
    // Scripts are confined by the same bubblewrap commands use (decision 0045).
    workflowRow(
      { ...(config.commands?.bwrapPath ? { bwrapPath: config.commands.bwrapPath } : {}), ...config.workflow },
      {
        check: (parentId, budget) => cost.checkChildBudget(parentId, budget),
        open: (runId, budget) => cost.budgets.openRun(runId, budget),
        close: (runId) => cost.budgets.closeRun(runId),
      },
    ),
  );
  const goals = wire(goalRow(config.goalMaxRounds));
  const hookService = config.hooks ? wire(hooksRow(config.hooks, { budgetLeft: (id) => cost.budgets.remaining(id), secrets: runCommand.secrets })) : undefined;
  const mcp = wire(mcpRow(config.mcp, roots));
  const checkpoints = wire(
    checkpointRow({ storeDir: config.storeDir, ...config.checkpoints, commandsConfined: async () => (await commandSandbox.status()).available }),
  );
  for (const row of config.rows ?? []) wire(row);
  return { workflows, goals, ...(hookService ? { hookService } : {}), mcp, checkpoints, hooks: composeHooks(hooks) };
}
