import type { SandboxMode } from '../session/events';
import type { ParentDeployment } from './dsh';
import { childConfinement } from './namespace-mounts';
import { CODEX_TMP_CONFIG, openPrivateTmp, wantsPrivateTmp } from './private-tmp';
import { programEnv } from './process';
import { type Json, type LineHandlers, noteError, num, record, runProgram, str } from './run';
import { type ProgramSettings, programVersion, stopTiming } from './settings';
import type { RemoteDriver, RemoteSink, RemoteTurnContext } from './types';

/** `codex exec --json` (decision 0036): one-shot, approvals `never`, its own sandbox per mode. */
const SANDBOX: Record<SandboxMode, string> = { 'read-only': 'read-only', 'workspace-write': 'workspace-write', 'full-access': 'danger-full-access' };

export function codexDriver(
  settings: ProgramSettings,
  secrets: () => readonly string[] = () => [],
  parent?: Pick<ParentDeployment, 'network' | 'storeDir'>,
): RemoteDriver {
  return {
    program: 'codex',
    toolPrefix: 'codex',
    // Its model provider is its own configuration (`model_provider`): the descriptor names codex.
    model: () => settings.model,
    ...(settings.turnTimeoutMs ? { turnTimeoutMs: settings.turnTimeoutMs } : {}),
    supports: (mode) => mode in SANDBOX,
    async runTurn(ctx, sink) {
      const version = await programVersion(settings.command, settings.env);
      // A confined child's temp folder is its own (decision 0122, amended s60): made now, gone once its program's group is.
      const tmp = parent?.storeDir && wantsPrivateTmp(ctx.sandbox) ? await openPrivateTmp(parent.storeDir, ctx.childId) : undefined;
      try {
        const { args, env } = codexInvocation(settings, { ...ctx, network: parent?.network?.() ?? false, tmp: tmp?.env }, secrets());
        return await runProgram(ctx, sink, {
          label: 'Codex',
          setting: 'arbor.remote.codex.command',
          spec: {
            command: settings.command,
            args,
            cwd: ctx.cwd,
            env,
            gracefulSignal: 'SIGINT',
            ...stopTiming(settings),
          },
          handlers: codexHandlers(version),
          confine: childConfinement(ctx, parent?.storeDir, env, tmp?.dir),
        });
      } finally {
        await tmp?.remove();
      }
    },
  };
}

/** The command line and environment of one `codex exec` turn (the bench runs the same one directly). */
export function codexInvocation(
  settings: ProgramSettings,
  ctx: Pick<RemoteTurnContext, 'cwd' | 'sandbox' | 'prompt'> & { network?: boolean; tmp?: Record<string, string> },
  secrets: readonly string[] = [],
): { args: string[]; env: Record<string, string> } {
  const args = [
    'exec',
    '--json',
    '--skip-git-repo-check',
    '--ephemeral',
    '-C',
    ctx.cwd,
    '-s',
    SANDBOX[ctx.sandbox],
    // Nobody can answer a question from inside `exec`: every approval is refused by the program itself.
    '-c',
    'approval_policy="never"',
    '-c',
    'analytics.enabled=false',
    '--disable',
    'plugins',
    '--disable',
    'remote_plugin',
    ...(settings.model ? ['-m', settings.model] : []),
    ...(settings.overrides ?? []).flatMap((o) => ['-c', o]),
    // Last, so neither Codex's own config.toml (the user's, a trusted project's) nor an override widens
    // workspace-write: no folder writable but its working folder and its TMPDIR (the child's private
    // temp folder, `tmp`; the host's /tmp stays read-only: amended s60), and no network when the
    // parent's commands have none (decision 0122).
    '-c',
    'sandbox_workspace_write.writable_roots=[]',
    ...Object.entries(CODEX_TMP_CONFIG).flatMap(([k, v]) => ['-c', `sandbox_workspace_write.${k}=${v}`]),
    ...(ctx.network ? [] : ['-c', 'sandbox_workspace_write.network_access=false']),
    '--',
    ctx.prompt,
  ];
  const env = programEnv({ ...(settings.home ? { CODEX_HOME: settings.home } : {}), ...settings.env }, process.env, secrets);
  return { args, env: { ...env, ...ctx.tmp } };
}

/** A command's output as the log shows it: what it printed, then how it ended. */
function commandResult(item: Json): { content: string; isError: boolean } {
  const exit = typeof item.exit_code === 'number' ? item.exit_code : undefined;
  const status = str(item.status);
  const out = str(item.aggregated_output);
  const how =
    status === 'declined' ? '(declined: the sandbox or policy refused it)' : exit !== undefined ? `(exit code ${exit})` : `(${status || 'no exit code'})`;
  // What it printed, one line break, then how it ended (no slice of the output: it ends with its own break).
  const content = !out ? how : out.endsWith('\n') ? `${out}${how}` : `${out}\n${how}`;
  return { content, isError: status !== 'completed' || (exit !== undefined && exit !== 0) };
}

/** A finished command's result into the sink. */
function commandOutcome(item: Json, id: string, sink: RemoteSink): Promise<void> {
  const r = commandResult(item);
  return sink.toolResult(id, r.content, r.isError);
}

/** Items that are a call and its result at once (sent only completed). */
const ONE_SHOT_ITEMS: Record<string, (item: Json) => { name: string; args: unknown; content: string; isError: boolean }> = {
  file_change: (i) => ({ name: 'apply_patch', args: { changes: i.changes }, content: JSON.stringify(i.changes ?? []), isError: str(i.status) === 'failed' }),
  mcp_tool_call: (i) => ({
    name: `mcp.${str(i.server)}.${str(i.tool)}`,
    args: i.arguments ?? {},
    content: JSON.stringify(i.result ?? i.error ?? null),
    isError: str(i.status) === 'failed' || i.error != null,
  }),
  web_search: (i) => ({ name: 'web_search', args: { query: i.query }, content: str(i.query), isError: false }),
};

/** How `codex exec --json` lines become sink calls (exported for the bench's mapping figure). */
export function codexHandlers(version: string | undefined): LineHandlers {
  const started = new Set<string>();
  // Not async: the call (when new) and the result are chained only when both are written.
  const command = (item: Json, id: string, completed: boolean, sink: RemoteSink): Promise<void> | undefined => {
    let call: Promise<void> | undefined;
    if (!started.has(id)) {
      started.add(id);
      call = sink.toolCall(id, 'shell', { command: str(item.command) });
    }
    if (!completed) return call;
    return call ? call.then(() => commandOutcome(item, id, sink)) : commandOutcome(item, id, sink);
  };
  // Synchronous unless it writes to the log (most items only buffer text): a mapped line then costs no promise.
  const onItem = (e: Json, st: { errors: string[] }, sink: RemoteSink, completed: boolean): void | Promise<void> => {
    const item = record(e.item) ? e.item : {};
    const id = str(item.id);
    const type = str(item.type);
    if (type === 'command_execution') return command(item, id, completed, sink);
    if (!completed) return; // other items are read when completed
    if (type === 'agent_message') {
      sink.delta('text', str(item.text));
      sink.text(str(item.text));
    } else if (type === 'reasoning') {
      sink.delta('reasoning', str(item.text));
      sink.reasoning(str(item.text));
    } else if (type === 'error') noteError(st, str(item.message));
    else if (ONE_SHOT_ITEMS[type]) {
      const r = ONE_SHOT_ITEMS[type](item);
      return sink.toolCall(id, r.name, r.args).then(() => sink.toolResult(id, r.content, r.isError));
    } else sink.skipped(`item:${type}`); // todo_list, collab_tool_call (codex's own sub-agents: provider-managed)
  };
  return {
    'thread.started': (e, st, sink) =>
      sink.external({
        program: 'codex',
        ...(version ? { version } : {}),
        externalId: str(e.thread_id) || 'unknown',
        ...st.proc.identity,
      }),
    'turn.started': () => undefined,
    'item.started': (e, st, sink) => onItem(e, st, sink, false),
    'item.updated': (e, st, sink) => onItem(e, st, sink, false),
    'item.completed': (e, st, sink) => onItem(e, st, sink, true),
    'turn.completed': (e, st, sink) => {
      const u = record(e.usage) ? e.usage : {};
      sink.usage({ promptTokens: num(u.input_tokens), completionTokens: num(u.output_tokens), cacheHitTokens: num(u.cached_input_tokens) });
      st.final = { stopReason: 'completed' };
    },
    'turn.failed': (e, st) => {
      const err = record(e.error) ? str(e.error.message) : '';
      st.final = { stopReason: 'error', error: `Codex failed: ${err || st.errors[st.errors.length - 1] || 'no reason given'}` };
    },
    error: (e, st) => noteError(st, str(e.message)),
  };
}
