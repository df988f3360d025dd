import type { SandboxMode } from '../session/events';
import { claudeConfigDir, claudeInstructions } from './claude-instructions';
import type { ParentDeployment } from './dsh';
import { childConfinement } from './namespace-mounts';
import { programEnv } from './process';
import { inOrder, type Json, type LineHandlers, num, record, runProgram, str } from './run';
import { type ProgramSettings, programVersion, stopTiming } from './settings';
import type { RemoteDriver, RemoteOutcome, RemoteSink, RemoteTurnContext } from './types';

/**
 * No settings file of Claude Code's (the user's, a project's, its local one): their permission rules
 * (`allow: ["Bash"]`) let a command run that `-p` would refuse, unconfined, their hooks run
 * unconfined too, and the project source brings `.mcp.json`, whose servers Claude Code starts on
 * the host unasked — all wider than a confined parent (decision 0122). Managed settings still apply.
 */
const NO_SETTINGS = ['--setting-sources', ''];

/** Claude Code's own words for a run without a key (`-p` with neither a login nor ANTHROPIC_API_KEY). */
const NO_KEY = /Not logged in|Invalid API key|\/login/;

/**
 * A confined child that fails for want of a key may have had it from a settings file Arbor no longer
 * lets it read (`apiKeyHelper`, the `env` table): say so, and where the key goes instead.
 */
export function withKeyHint(out: RemoteOutcome, sandbox: SandboxMode): RemoteOutcome {
  if (sandbox === 'full-access' || out.stopReason !== 'error' || !NO_KEY.test(out.error ?? '')) return out;
  return {
    ...out,
    error:
      `${out.error} (REMOTE_CLAUDE_NO_KEY) In ${sandbox} Arbor runs Claude Code without its settings files (--setting-sources '', decision 0122), ` +
      "so a key or base URL from their apiKeyHelper or env table is not read: put it in arbor.remote.claudeCode.env (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL), or log in with 'claude /login'.",
  };
}

/**
 * `claude -p --output-format stream-json` (decision 0036). Policy never widens: read-only
 * takes the edit tools away and keeps the default permission mode, in which `-p` refuses
 * any Bash command that is not read-only; workspace-write accepts edits (in its working
 * folder) and still refuses other writes; full-access skips permissions.
 */
const PERMISSIONS: Record<SandboxMode, string[]> = {
  'read-only': ['--permission-mode', 'default', '--disallowedTools', 'Edit,Write,MultiEdit,NotebookEdit', ...NO_SETTINGS],
  'workspace-write': ['--permission-mode', 'acceptEdits', ...NO_SETTINGS],
  'full-access': ['--dangerously-skip-permissions'],
};

export function claudeDriver(
  settings: ProgramSettings,
  secrets: () => readonly string[] = () => [],
  parent?: Pick<ParentDeployment, 'storeDir'>,
): RemoteDriver {
  return {
    program: 'claude-code',
    toolPrefix: 'claude',
    // Claude Code speaks only Anthropic's Messages API (to ANTHROPIC_BASE_URL when set).
    modelProvider: 'anthropic',
    model: () => settings.model,
    ...(settings.turnTimeoutMs ? { turnTimeoutMs: settings.turnTimeoutMs } : {}),
    supports: (mode) => mode in PERMISSIONS,
    async runTurn(ctx, sink) {
      const version = await programVersion(settings.command, settings.env);
      const { args, env } = claudeInvocation(settings, ctx, secrets());
      const out = await runProgram(ctx, sink, {
        label: 'Claude Code',
        setting: 'arbor.remote.claudeCode.command',
        spec: {
          command: settings.command,
          args,
          cwd: ctx.cwd,
          env,
          ...stopTiming(settings),
        },
        handlers: claudeHandlers(version),
        // No OS sandbox of its own: its namespace keeps protected names and the store from its edits (decision 0036, amended s60).
        confine: childConfinement(ctx, parent?.storeDir, env),
      });
      return withKeyHint(out, ctx.sandbox);
    },
  };
}

/**
 * The command line and environment of one `claude -p` turn (the bench runs the same one directly).
 * A confined child reads no settings and so no `CLAUDE.md`: the instructions Arbor reads for its
 * folder are appended to its system prompt instead (decision 0122, amended).
 */
export function claudeInvocation(
  settings: ProgramSettings,
  ctx: Pick<RemoteTurnContext, 'sandbox' | 'prompt' | 'cwd'>,
  secrets: readonly string[] = [],
): { args: string[]; env: Record<string, string> } {
  const env = programEnv(
    {
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      ...(settings.home ? { CLAUDE_CONFIG_DIR: settings.home } : {}),
      // As root, claude refuses to skip permissions unless told it runs in a sandbox.
      ...(ctx.sandbox === 'full-access' && process.getuid?.() === 0 ? { IS_SANDBOX: '1' } : {}),
      ...settings.env,
    },
    process.env,
    secrets,
  );
  const instructions = claudeInstructions(ctx.sandbox, ctx.cwd, claudeConfigDir(env));
  const args = [
    '-p',
    '--output-format',
    'stream-json',
    '--verbose',
    '--include-partial-messages',
    ...(settings.model ? ['--model', settings.model] : []),
    ...PERMISSIONS[ctx.sandbox],
    ...(instructions ? ['--append-system-prompt', instructions] : []),
    '--',
    ctx.prompt,
  ];
  return { args, env };
}

/** The text of a tool result's content (a string, or blocks). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b) => (record(b) ? str(b.text) || (b.type === 'image' ? '[image]' : '') : '')).join('\n');
  return content == null ? '' : JSON.stringify(content);
}

const RESULT: Record<string, (r: Json, denials: string) => RemoteOutcome> = {
  success: (r) => ({ stopReason: r.stop_reason === 'max_tokens' ? 'max-tokens' : 'completed' }),
  error_max_turns: (_r, d) => ({ stopReason: 'error', error: `Claude Code reached its turn limit.${d}` }),
  error_max_budget_usd: (_r, d) => ({ stopReason: 'error', error: `Claude Code reached its budget limit.${d}` }),
  error_during_execution: (r, d) => ({ stopReason: 'error', error: `Claude Code failed during execution${str(r.result) ? `: ${str(r.result)}` : '.'}${d}` }),
};

/** How `claude -p --output-format stream-json` lines become sink calls (exported for the bench's mapping figure). */
export function claudeHandlers(version: string | undefined): LineHandlers {
  /** Lines of Claude's own sub-agents (Task) stay in its transcript; only the Task call and result are ours. */
  const sub = (e: Json, sink: RemoteSink) => {
    if (e.parent_tool_use_id == null) return false;
    sink.skipped('subagent-line');
    return true;
  };
  return {
    system: async (e, st, sink) => {
      if (e.subtype !== 'init') return;
      sink.model(str(e.model));
      const v = version ?? (str(e.claude_code_version) || undefined);
      await sink.external({
        program: 'claude-code',
        ...(v ? { version: v } : {}),
        externalId: str(e.session_id) || 'unknown',
        ...st.proc.identity,
      });
    },
    stream_event: (e, _st, sink) => {
      if (sub(e, sink)) return;
      const ev = record(e.event) ? e.event : {};
      const d = record(ev.delta) ? ev.delta : {};
      if (ev.type !== 'content_block_delta') return;
      if (d.type === 'text_delta') sink.delta('text', str(d.text));
      else if (d.type === 'thinking_delta') sink.delta('reasoning', str(d.thinking));
    },
    assistant: (e, _st, sink) => {
      if (sub(e, sink)) return;
      const m = record(e.message) ? e.message : {};
      if (str(m.model)) sink.model(str(m.model));
      return inOrder(m.content, (b) => {
        if (!record(b)) return;
        if (b.type === 'text') sink.text(str(b.text));
        else if (b.type === 'thinking') sink.reasoning(str(b.thinking));
        else if (b.type === 'tool_use') return sink.toolCall(str(b.id), str(b.name), b.input ?? {});
      });
    },
    user: (e, _st, sink) => {
      if (sub(e, sink)) return;
      const m = record(e.message) ? e.message : {};
      return inOrder(m.content, (b) => {
        if (record(b) && b.type === 'tool_result') return sink.toolResult(str(b.tool_use_id), textOf(b.content), b.is_error === true);
      });
    },
    result: (e, st, sink) => {
      const u = record(e.usage) ? e.usage : {};
      const read = num(u.cache_read_input_tokens);
      sink.usage({
        promptTokens: num(u.input_tokens) + read + num(u.cache_creation_input_tokens),
        completionTokens: num(u.output_tokens),
        cacheHitTokens: read,
      });
      const denials =
        Array.isArray(e.permission_denials) && e.permission_denials.length
          ? ` Refused by its permissions: ${e.permission_denials.map((p) => (record(p) ? str(p.tool_name) : '')).join(', ')}.`
          : '';
      const map = RESULT[str(e.subtype)];
      st.final = map ? map(e, denials) : { stopReason: 'error', error: `Claude Code ended with ${str(e.subtype) || 'an unknown result'}.${denials}` };
      if (e.is_error === true && st.final.stopReason !== 'error')
        st.final = { stopReason: 'error', error: `Claude Code: ${str(e.result) || 'the run failed'}` };
    },
  };
}
