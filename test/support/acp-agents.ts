import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { SandboxMode } from '../../src/core/session/events';
import type { ChatBody, ModelServer, RecordedRequest, Reply } from './model-server';
import { repoRoot } from './repo-root';

// The three real ACP agents the `acp` remote provider is tested against (issue 14), installed
// by scripts/acp/setup.mjs into .tools/acp-agents/, and how to run each fully offline against
// the loopback model server (test/support/model-server.ts). Facts: docs/acp-agents-facts.md.

export type AcpAgentName = 'example' | 'claude' | 'codex';

export const ACP_AGENTS_DIR = path.join(repoRoot(), '.tools', 'acp-agents');
const MODULES = path.join(ACP_AGENTS_DIR, 'node_modules');

/** Pinned in scripts/acp/paths.mjs (bump both); `entry` is what `node` runs, `bin` the npm link to it. */
export const ACP_AGENTS = {
  example: {
    pkg: '@agentclientprotocol/sdk',
    version: '1.9.0',
    entry: path.join(MODULES, '@agentclientprotocol', 'sdk', 'dist', 'examples', 'agent.js'),
    bin: undefined,
  },
  claude: {
    pkg: '@agentclientprotocol/claude-agent-acp',
    version: '0.101.0',
    entry: path.join(MODULES, '@agentclientprotocol', 'claude-agent-acp', 'dist', 'index.js'),
    bin: path.join(MODULES, '.bin', 'claude-agent-acp'),
  },
  codex: {
    pkg: '@agentclientprotocol/codex-acp',
    version: '2.6.0',
    entry: path.join(MODULES, '@agentclientprotocol', 'codex-acp', 'dist', 'index.js'),
    bin: path.join(MODULES, '.bin', 'codex-acp'),
  },
} as const;

/** What the adapters run inside: Codex 0.166.0 (`codex app-server`) and Claude Code 2.1.318 (agent SDK 0.3.318). */
export const ACP_BUNDLED = { '@openai/codex': '0.166.0', '@anthropic-ai/claude-agent-sdk': '0.3.318' } as const;

/**
 * The session mode (ACP `session/set_mode` id) each agent offers for Arbor's sandbox modes,
 * as test/remote/acp-agents.test.ts checks them. The example agent offers none.
 * - claude: `default` asks for every Bash command and edit (answer reject_once: nothing is
 *   written); `acceptEdits` writes inside the workspace without asking (also `echo > file`);
 *   `bypassPermissions` asks nothing and is offered only when not root or with IS_SANDBOX=1.
 *   Its own default, `auto`, and `plan` send Bash to a classifier model call: never use them.
 * - codex: its Linux sandbox (bubblewrap) per mode; approvals `on-request` except full access
 *   (`never`). Its own default, `agent` ("Auto review"), has a model review approvals.
 */
export const SANDBOX_MODE_IDS: Record<'claude' | 'codex', Record<SandboxMode, string>> = {
  claude: { 'read-only': 'default', 'workspace-write': 'acceptEdits', 'full-access': 'bypassPermissions' },
  codex: { 'read-only': 'read-only', 'workspace-write': 'workspace-write', 'full-access': 'agent-full-access' },
};

/** The version in an installed package's package.json (`--version` is not what setup checks). */
export function installedVersion(pkg: string): string | undefined {
  try {
    return (JSON.parse(fs.readFileSync(path.join(MODULES, pkg, 'package.json'), 'utf8')) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/**
 * A fresh home for one agent run, outside the temp dir (Codex refuses to set up its sandbox
 * helper under it): beside the agents, unless the checkout itself is under the temp dir (a CI
 * clone in /tmp), then /var/tmp. Its `work/` folder is the session's workspace.
 */
export function agentHome(tag: string): string {
  const tmp = fs.realpathSync(os.tmpdir());
  const underTmp = (p: string) => p === tmp || p.startsWith(tmp + path.sep);
  const base = underTmp(fs.realpathSync(repoRoot())) ? path.join('/var/tmp', 'arbor-acp-homes') : path.join(ACP_AGENTS_DIR, 'homes');
  fs.mkdirSync(base, { recursive: true });
  // The real path: the agents resolve their cwd (a symlinked one shows up as absolute paths in titles).
  const home = fs.realpathSync(fs.mkdtempSync(path.join(base, `${tag}-`)));
  fs.mkdirSync(path.join(home, 'work'));
  return home;
}

/** The workspace (session cwd) of a home made by agentHome. */
export const workspaceOf = (home: string): string => path.join(home, 'work');

export interface AgentLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** The base of every agent's environment: no host variables but PATH and the locale; HOME is the test's own (no dotfiles). */
function baseEnv(home: string): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8' };
}

/** SDK 1.9.0's scripted example agent: no model, no files; ~1 s between its steps. */
export function exampleLaunch(home: string): AgentLaunch {
  return { command: process.execPath, args: [ACP_AGENTS.example.entry], env: baseEnv(home) };
}

/**
 * claude-agent-acp against `server` (Anthropic Messages at `/v1/messages?beta=true`). No
 * `authenticate`: it advertises no auth methods and takes the API key from the environment.
 */
export function claudeLaunch(server: ModelServer, home: string): AgentLaunch {
  const env: Record<string, string> = {
    ...baseEnv(home),
    CLAUDE_CONFIG_DIR: path.join(home, 'claude'),
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${server.port}`,
    ANTHROPIC_API_KEY: 'dummy',
    // Stops every other network call (telemetry, updates, …); the session title is still asked of the model.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    // No "what next" model call after every turn but the first.
    CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION: 'false',
    CLAUDE_CODE_MAX_RETRIES: '0',
  };
  // As root, the bypassPermissions mode is offered (and accepted) only in a declared sandbox.
  if (process.getuid?.() === 0) env.IS_SANDBOX = '1';
  return { command: process.execPath, args: [ACP_AGENTS.claude.entry], env };
}

/**
 * codex-acp against `server` (OpenAI Responses at `/v1/responses`): CODEX_HOME holds a
 * config.toml with the same provider settings `codex exec -c …` takes. No `authenticate`:
 * a custom provider counts as a "gateway" login (it sends `_auth/status_update` kind gateway).
 */
export function codexLaunch(server: ModelServer, home: string): AgentLaunch {
  const codexHome = path.join(home, 'codex');
  fs.mkdirSync(codexHome, { recursive: true });
  fs.writeFileSync(
    path.join(codexHome, 'config.toml'),
    [
      'model = "gpt-5.5"',
      'model_provider = "mock"',
      '[analytics]',
      'enabled = false',
      // Without these, the app server clones github.com/openai/plugins and looks up chatgpt.com.
      '[features]',
      'plugins = false',
      'remote_plugin = false',
      '[model_providers.mock]',
      'name = "mock"',
      `base_url = "${server.baseURL}"`,
      'wire_api = "responses"',
      'env_key = "MOCK_API_KEY"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
    ].join('\n'),
  );
  return { command: process.execPath, args: [ACP_AGENTS.codex.entry], env: { ...baseEnv(home), CODEX_HOME: codexHome, MOCK_API_KEY: 'mock-key' } };
}

export function agentLaunch(name: AcpAgentName, server: ModelServer, home: string): AgentLaunch {
  return name === 'example' ? exampleLaunch(home) : name === 'claude' ? claudeLaunch(server, home) : codexLaunch(server, home);
}

// ── the model server's side ──────────────────────────────────────────────────────────────

/**
 * The agents' requests that are no turn of the session, answered apart because they come in
 * any order with the turn's own requests:
 * - the session title, from both: Claude asks at the first prompt of 10+ characters (or at
 *   the turn's end) on `/v1/messages` (`output_config.format`), Codex after the first turn on
 *   `/v1/responses` (`text.format`, named `codex_output_schema`); a JSON schema with one
 *   `title` property and no tools;
 * - Claude's prompt suggestion after a turn (off with CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION=false).
 */
export function sideRequest(body: ChatBody): 'title' | 'suggestion' | undefined {
  type Format = { type?: string; schema?: { properties?: object } };
  const format = (body.output_config as { format?: Format } | undefined)?.format ?? (body.text as { format?: Format } | undefined)?.format;
  if (format?.type === 'json_schema' && format.schema?.properties && 'title' in format.schema.properties) return 'title';
  const last = body.messages?.[body.messages.length - 1] as { content?: unknown } | undefined;
  if (JSON.stringify(last?.content ?? '').includes('[SUGGESTION MODE')) return 'suggestion';
  return undefined;
}

/**
 * Script the server for the agents: each wire's replies are served in order to the turn
 * requests, then `ok`; side requests get a title or an empty suggestion without taking a
 * reply from the queue.
 */
export function scriptAgents(server: ModelServer, queues: Partial<Record<'messages' | 'responses', Reply[]>>): void {
  server.setFallback((body, i) => {
    const side = sideRequest(body);
    if (side === 'title') return { text: JSON.stringify({ title: 'Test session' }) };
    if (side === 'suggestion') return { text: ' ' };
    return queues[server.requests[i].wire as 'messages']?.shift() ?? { text: 'ok' };
  });
}

/** The requests that were turns of the session (side requests left out). */
export function turnRequests(server: ModelServer, wire: 'messages' | 'responses'): RecordedRequest[] {
  return server.requests.filter((r) => r.wire === wire && !sideRequest(r.body));
}

/** Claude runs a shell command (permission asked in `default` mode). */
export const claudeBash = (command: string, description = 'run a command'): Reply => ({ toolCalls: [{ name: 'Bash', arguments: { command, description } }] });

/** Claude writes a file (relative paths are taken from the workspace; permission asked in `default` mode). */
export const claudeWrite = (filePath: string, content: string): Reply => ({ toolCalls: [{ name: 'Write', arguments: { file_path: filePath, content } }] });

/**
 * Codex runs a shell command. With `escalate` (the approval question), the command asks to
 * leave the sandbox: the one way a shell command gets a `session/request_permission` under
 * `on-request` approvals. A command that ends within a few milliseconds may never be reported
 * (no `tool_call` at all): start it with `sleep 0.3;` when the test reads its updates.
 */
export function codexExec(cmd: string, escalate?: string): Reply {
  const args: Record<string, unknown> = { cmd };
  if (escalate) Object.assign(args, { sandbox_permissions: 'require_escalated', justification: escalate });
  return { toolCalls: [{ name: 'exec_command', arguments: args }] };
}

const sse = (type: string, data: object): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/**
 * Codex adds a file with its `apply_patch` tool: a freeform (`custom_tool_call`) item, which
 * the scripted replies cannot express, so sent as raw Responses SSE. Outside the writable
 * roots (read-only mode) it asks permission first.
 */
export function codexAddFile(file: string, content: string, callId = 'call_patch_1'): Reply {
  const input = `*** Begin Patch\n*** Add File: ${file}\n${content
    .split('\n')
    .filter((l, i, all) => i < all.length - 1 || l !== '')
    .map((l) => `+${l}`)
    .join('\n')}\n*** End Patch\n`;
  const item = { id: 'ctc_1', type: 'custom_tool_call', status: 'completed', call_id: callId, name: 'apply_patch', input };
  const response = (status: string, output: object[], extra: object = {}) => ({
    id: 'resp_patch',
    object: 'response',
    created_at: 0,
    status,
    model: 'gpt-5.5',
    output,
    ...extra,
  });
  const usage = {
    input_tokens: 100,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 20,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 120,
  };
  return {
    raw: [
      sse('response.created', { response: response('in_progress', []) }),
      sse('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', input: '' } }),
      sse('response.output_item.done', { output_index: 0, item }),
      sse('response.completed', { response: response('completed', [item], { usage }) }),
    ],
  };
}

/** A reply that streams two chunks of text, then holds the stream open until the client leaves (for cancel). */
export const stalled = (text = 'The beginning of a long answer that never ends'): Reply => ({ text, fault: { kind: 'stall', afterChunks: 2 } });
