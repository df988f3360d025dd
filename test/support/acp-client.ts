import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk/unstable';
import type { AgentLaunch } from './acp-agents';

// A bare ACP client (SDK 2.4, no Arbor code) driving any ACP agent program over its stdio,
// spawned in its own process group: what the agent facts and test/remote/acp-agents.test.ts
// stand on, independent of the `acp` provider.

export type PermissionAnswer = (req: acp.RequestPermissionRequest) => acp.RequestPermissionResponse;

export interface AgentPeer {
  readonly child: ChildProcess;
  /** The agent's process group (its pid: spawned detached). */
  readonly pgid: number;
  readonly init: acp.InitializeResponse;
  readonly agent: acp.ClientContext;
  /** Every `session/update`, in order of arrival. */
  readonly updates: acp.SessionNotification[];
  /** Every `session/request_permission`, in order. */
  readonly permissions: acp.RequestPermissionRequest[];
  /** Notifications no ACP method covers (e.g. `_auth/status_update`), by method. */
  readonly extNotifications: { method: string; params: unknown }[];
  /** How permission requests are answered (default: the first reject_once option). */
  answer: PermissionAnswer;
  stderr(): string;
  newSession(cwd: string): Promise<acp.NewSessionResponse>;
  setMode(sessionId: string, modeId: string): Promise<void>;
  prompt(sessionId: string, text: string, timeoutMs?: number): Promise<acp.PromptResponse>;
  cancel(sessionId: string): Promise<void>;
  /** Ends stdin and waits for the exit; kills the group when it takes longer than `graceMs`. */
  close(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; killed: boolean }>;
}

/** Answers with the first option of `kind` (throws when the agent offered none). */
export function choose(kind: acp.PermissionOptionKind): PermissionAnswer {
  return (req) => {
    const option = req.options.find((o) => o.kind === kind);
    if (!option) throw new Error(`no ${kind} option among ${req.options.map((o) => `${o.optionId}:${o.kind}`).join(', ')}`);
    return { outcome: { outcome: 'selected', optionId: option.optionId } };
  };
}

function within<T>(what: string, ms: number, p: Promise<T>, peer: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms; agent stderr tail:\n${peer().slice(-2000)}`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

/** Spawns `launch` in its own process group with `cwd`, connects the SDK client and runs `initialize`. */
export async function startAgent(launch: AgentLaunch, cwd: string, opts: { initTimeoutMs?: number } = {}): Promise<AgentPeer> {
  const child = spawn(launch.command, launch.args, { cwd, env: launch.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  const pgid = child.pid!;
  let err = '';
  child.stderr!.on('data', (d: Buffer) => {
    err = (err + d.toString('utf8')).slice(-64 * 1024);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  child.stdin!.on('error', () => undefined); // EPIPE after the agent is gone
  const out = new PassThrough();
  child.stdout!.pipe(out);
  const updates: acp.SessionNotification[] = [];
  const permissions: acp.RequestPermissionRequest[] = [];
  const extNotifications: { method: string; params: unknown }[] = [];
  const state = { answer: choose('reject_once') as PermissionAnswer };
  const app = acp
    .client({ name: 'arbor-acp-facts' })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
      return undefined;
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      permissions.push(params);
      return state.answer(params);
    })
    .onNotification('*', (ctx) => {
      const { method, params } = ctx as unknown as { method: string; params: unknown };
      extNotifications.push({ method, params });
      return undefined;
    });
  const conn = app.connect(acp.ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(out) as ReadableStream<Uint8Array>));
  const stderr = () => err;
  const init = await within(
    'initialize',
    opts.initTimeoutMs ?? 30_000,
    conn.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: 'arbor-acp-facts', version: '1' },
    }),
    stderr,
  );
  return {
    child,
    pgid,
    init,
    agent: conn.agent,
    updates,
    permissions,
    extNotifications,
    get answer() {
      return state.answer;
    },
    set answer(a: PermissionAnswer) {
      state.answer = a;
    },
    stderr,
    newSession: (sessionCwd) => within('session/new', 30_000, conn.agent.request(acp.methods.agent.session.new, { cwd: sessionCwd, mcpServers: [] }), stderr),
    async setMode(sessionId, modeId) {
      await within('session/set_mode', 15_000, conn.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId }), stderr);
    },
    prompt: (sessionId, text, timeoutMs = 60_000) =>
      within('session/prompt', timeoutMs, conn.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] }), stderr),
    cancel: (sessionId) => conn.agent.notify(acp.methods.agent.session.cancel, { sessionId }),
    async close(graceMs = 8000) {
      child.stdin!.end();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((r) => {
        timer = setTimeout(() => r('late'), graceMs);
      });
      const first = await Promise.race([exited, late]);
      clearTimeout(timer);
      if (first !== 'late') {
        conn.close();
        return { ...first, killed: false };
      }
      killGroup(pgid);
      const done = await exited;
      conn.close();
      return { ...done, killed: true };
    },
  };
}

/** SIGKILL to a whole process group (no error when it is gone). */
export function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    /* gone */
  }
}

interface Proc {
  pid: number;
  state: string;
  pgid: number;
  cwd: string;
  cmdline: string;
}

function procs(): Proc[] {
  const list: Proc[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      let cwd = '';
      try {
        cwd = fs.readlinkSync(`/proc/${d}/cwd`);
      } catch {
        /* a zombie has none */
      }
      const cmdline = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      list.push({ pid: Number(d), state: fields[0], pgid: Number(fields[2]), cwd, cmdline });
    } catch {
      /* gone meanwhile */
    }
  }
  return list;
}

/** Live (not zombie) processes of group `pgid`, as `pid cmdline`. */
export function groupProcesses(pgid: number): string[] {
  return procs()
    .filter((p) => p.pgid === pgid && p.state !== 'Z')
    .map((p) => `${p.pid} ${p.cmdline}`);
}

/**
 * Live processes working in `dir` or naming it on their command line, whatever their group:
 * Claude Code runs each Bash command in a session of its own, which a group kill misses.
 */
export function processesUnder(dir: string): { pid: number; line: string }[] {
  // A guard, as callers kill what this returns: '' or '/' would name every process.
  if (!path.isAbsolute(dir) || dir.split(path.sep).filter(Boolean).length < 3) throw new Error(`processesUnder: "${dir}" is no test home`);
  const inside = (p: string) => p === dir || p.startsWith(dir + path.sep);
  return procs()
    .filter((p) => p.pid !== process.pid && p.state !== 'Z' && (inside(p.cwd) || p.cmdline.includes(dir)))
    .map((p) => ({ pid: p.pid, line: `${p.pid} ${p.cmdline}` }));
}

/** Live processes whose command line contains `text` (a marker in a test's command). */
export function processesMatching(text: string): { pid: number; line: string }[] {
  return procs()
    .filter((p) => p.pid !== process.pid && p.state !== 'Z' && p.cmdline.includes(text) && !p.cmdline.includes('acp-agents.test'))
    .map((p) => ({ pid: p.pid, line: `${p.pid} ${p.cmdline}` }));
}

/** Polls until `check` holds (true) or `ms` pass (false). */
export async function eventually(check: () => boolean, ms = 5000, every = 100): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if (check()) return true;
    if (Date.now() >= until) return false;
    await new Promise((r) => setTimeout(r, every));
  }
}

/** The text of the agent's message chunks for a session, joined (informational chunks, tagged `_meta.claudeCode.kind`, left out). */
export function agentText(updates: readonly acp.SessionNotification[], sessionId: string): string {
  return updates
    .filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === 'agent_message_chunk')
    .filter((u) => !(u.update._meta as { claudeCode?: { kind?: string } } | undefined)?.claudeCode?.kind)
    .map((u) => {
      const c = (u.update as { content: acp.ContentBlock }).content;
      return c.type === 'text' ? c.text : '';
    })
    .join('');
}

/** The `session/update` kinds of a session in order, a tool call's status appended (`tool_call_update:completed`). */
export function updateKinds(updates: readonly acp.SessionNotification[], sessionId: string): string[] {
  return updates
    .filter((u) => u.sessionId === sessionId)
    .map((u) => {
      const status = (u.update as { status?: string }).status;
      return status ? `${u.update.sessionUpdate}:${status}` : u.update.sessionUpdate;
    });
}

export type ToolCallEvent = Extract<acp.SessionUpdate, { sessionUpdate: 'tool_call' | 'tool_call_update' }>;

/** The updates about one tool call (its `tool_call` and every `tool_call_update`), or about every call without an id. */
export function toolCallUpdates(updates: readonly acp.SessionNotification[], toolCallId?: string): ToolCallEvent[] {
  return updates
    .map((u) => u.update)
    .filter(
      (u): u is ToolCallEvent =>
        (u.sessionUpdate === 'tool_call' || u.sessionUpdate === 'tool_call_update') && (toolCallId === undefined || u.toolCallId === toolCallId),
    );
}
