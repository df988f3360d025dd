import type { FeatureRow } from '../feature/rows';
import type { SubagentControl } from '../subagent/surface';
import { runOneShot } from '../subagent/tools/one-shot';
import { subagentFailure } from '../subagent/tools/shared';
import { SubagentError, type SubagentProvider, type SubagentRequest } from '../subagent/types';
import { protectNames } from '../tools/protected-names';
import type { Tool } from '../tools/tool';
import { acpDriver } from './acp';
import type { AcpChildrenFactory } from './acp-children';
import { acpMirrors } from './acp-mirrors';
import { claudeDriver } from './claude';
import { codexDriver } from './codex';
import { dshDriver, type ParentDeployment } from './dsh';
import { acpAgentNames } from './program-reads';
import type { ProgramSettings, RemoteSettings } from './settings';
import type { RemoteDriver } from './types';

/**
 * The remote providers a deployment configured (decision 0035), and one global delegation
 * tool each with a static description: registered only when configured, so request heads
 * stay the same for everyone else (the model does not choose a provider; tool names do).
 */
interface Entry {
  provider: string;
  tool: string;
  what: string;
  /** It may ask before acting (ACP's permission requests): under `escalate` the human answers. */
  asks?: boolean;
}

interface ProgramEntry extends Entry {
  key: 'codex' | 'claudeCode' | 'dshSdk';
  driver: (s: ProgramSettings, secrets: () => readonly string[], parent: ParentDeployment) => RemoteDriver;
}

const ENTRIES: ProgramEntry[] = [
  { key: 'codex', provider: 'codex', tool: 'delegate_codex', what: 'OpenAI Codex (the `codex` CLI)', driver: codexDriver },
  { key: 'claudeCode', provider: 'claude-code', tool: 'delegate_claude_code', what: 'Claude Code (the `claude` CLI)', driver: claudeDriver },
  { key: 'dshSdk', provider: 'dsh-sdk', tool: 'delegate_arbor', what: 'another Arbor (`arbor run`, its own store and sandbox)', driver: dshDriver },
];

/** A remote provider: one-shot only, no start capabilities, no inherited history. */
export function remoteProvider(name: string, driver: RemoteDriver, delegationTool?: string): SubagentProvider {
  return {
    name,
    ...(delegationTool ? { delegationTool } : {}),
    capabilities: { outputSchema: false, depthLimit: false, toolFilter: false, persona: false },
    inheritsParentContext: false,
    modes: ['one-shot'],
    remote: driver,
    prepare: () => ({}),
  };
}

const PARAMS = {
  type: 'object' as const,
  properties: {
    prompt: { type: 'string' as const, description: 'The whole task: the other agent sees none of your conversation.' },
    label: { type: 'string' as const, description: 'A short name shown in the agent tree, e.g. "review".' },
    mode: {
      type: 'string' as const,
      enum: ['wait', 'background'],
      description: "'wait' (default): get its final answer as this tool's result. 'background': you go on; its answer arrives later as a notice.",
    },
  },
  required: ['prompt'],
  additionalProperties: false,
};

function delegationTool(rt: SubagentControl, e: Entry, driver: RemoteDriver, model: string | undefined): Tool {
  return {
    name: e.tool,
    description:
      `Delegate a self-contained task to ${e.what}, run as a one-shot child in the agent tree. It works in the same folder under ` +
      `your permissions (never wider) and ${e.asks ? 'what it asks permission for is refused unless a human allows it' : 'cannot ask for approval'}; its final message is the result.`,
    parameters: PARAMS,
    async execute(args, ctx) {
      const caller = rt.resident(ctx.sessionId);
      if (!caller) return subagentFailure(e.tool, new Error(`session ${ctx.sessionId} is not live`));
      // Refused before anything is created: a program that cannot enforce the mode never runs wider.
      if (!driver.supports(ctx.sandbox))
        return subagentFailure(
          e.tool,
          new SubagentError('UNSUPPORTED_SANDBOX', `${e.what} cannot enforce the ${ctx.sandbox} sandbox here; do the work yourself.`),
        );
      // No model set: the program runs its own default, and the child's descriptor records it once the program says (decision 0052).
      const request: SubagentRequest = { prompt: String(args.prompt ?? ''), ...(model ? { model } : {}) };
      if (typeof args.label === 'string') request.label = args.label;
      try {
        return await runOneShot(rt, caller, e.provider, request, args.mode === 'background', ctx.signal);
      } catch (err) {
        return subagentFailure(e.tool, err);
      }
    },
  };
}

function protectsReason(name: string, agent: string): string {
  return `'${name}' is the ACP agent "${agent}"'s own project configuration (its "protects" setting): the agent acts on it outside the sandbox; an agent must not change it`;
}

/**
 * The harness row of the remote providers (decision 0035): for each configured program its
 * provider and its global delegation tool; none configured, nothing at all. An ACP agent's
 * own sub-sessions are mirrored into the tree (decision 0041) unless `acpChildren` says otherwise.
 */
export function remoteRow(
  settings: RemoteSettings,
  secrets: () => readonly string[],
  endpoint: ParentDeployment['endpoint'] = () => ({ name: 'default' }),
  acpChildren?: AcpChildrenFactory,
  network: () => boolean = () => false,
): FeatureRow<void> {
  return {
    name: 'remote',
    wire({ subagents, tools, registerProvider, host }) {
      const children = acpChildren ?? acpMirrors({ store: host.store, registry: subagents.mirrors, streamOf: (id) => host.streamOf(id) });
      for (const e of ENTRIES) {
        const s = settings[e.key];
        if (!s?.command) continue;
        const driver = e.driver(s, secrets, { storeDir: host.store.dir, endpoint, network });
        registerProvider(remoteProvider(e.provider, driver, e.tool));
        tools.register(delegationTool(subagents, e, driver, s.model));
      }
      for (const a of settings.acp ?? []) {
        const e: Entry = {
          provider: `acp:${a.name}`,
          tool: `delegate_acp_${a.name}`,
          what: `the ACP agent "${a.name}"${a.description ? ` (${a.description})` : ''}`,
          asks: true,
        };
        const driver = acpDriver(a, secrets, children, undefined, undefined, host.store.dir);
        registerProvider(remoteProvider(e.provider, driver, e.tool));
        tools.register(delegationTool(subagents, e, driver, a.model));
      }
      // The agents' own project configuration (decision 0115): protected while this harness runs.
      // A known program's own names (`AGENT_CONFIG_NAMES`: Gemini CLI's `.gemini`, OpenCode's) come with it.
      const named = (settings.acp ?? []).flatMap((a) => acpAgentNames(a).map((n) => ({ n, agent: a.name })));
      if (named.length === 0) return { service: undefined };
      const by = new Map(named.map(({ n, agent }) => [n, agent]));
      const release = protectNames({}, [...by.keys()], (n) => protectsReason(n, by.get(n) ?? ''));
      return { service: undefined, hooks: { close: async () => release() } };
    },
  };
}
