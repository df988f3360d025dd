import { sessionStatus } from '../core/session/status';
import { Harness } from '../core/harness';
import type { SessionEvent } from '../core/session/events';
import { Store } from '../core/store/store';
import { UsageError, type ParsedArgs } from './args';
import { harnessConfig, storeDirOf } from './config';
import { goal } from './goal';

export interface Io {
  out(line: string): void;
  err(line: string): void;
  env: NodeJS.ProcessEnv;
}

export type Command = (args: ParsedArgs, io: Io) => Promise<number>;

/** `--json`: every event as one JSON line tagged with its session; otherwise readable progress. */
export function wireOutput(h: Harness, id: string, args: ParsedArgs, io: Io): void {
  if (args.options.has('json')) {
    h.onEvent((session, e) => io.out(JSON.stringify({ session, ...e })));
    return;
  }
  h.onEvent((session, e) => describeEvent(session === id, e, io));
}

function describeEvent(own: boolean, e: SessionEvent, io: Io): void {
  const tag = own ? '' : '  ';
  if (e.type === 'assistant/message') {
    if (e.text) io.out(`${tag}${e.text}`);
    for (const c of e.toolCalls ?? []) io.err(`${tag}→ ${c.name} ${c.arguments.length > 200 ? `${c.arguments.slice(0, 200)}…` : c.arguments}`);
  } else if (e.type === 'tool/result' && e.isError) io.err(`${tag}✗ ${e.name}: ${e.content.split('\n')[0]}`);
  else if (e.type === 'turn/end' && e.stopReason !== 'completed') io.err(`${tag}turn ended: ${e.stopReason}${e.error ? ` — ${e.error}` : ''}`);
}

/** Drive the session and every descendant until all have settled; the exit code follows the session's own last turn. */
async function settleAndReport(h: Harness, id: string, io: Io): Promise<number> {
  await h.settle();
  const session = h.resident(id)?.session ?? (await h.store.inspect(id));
  let last: string | undefined;
  for (const e of session.events) if (e.type === 'turn/end') last = e.stopReason;
  io.err(`session ${id}`);
  return last === 'completed' ? 0 : 1;
}

const run: Command = async (args, io) => {
  const prompt = args.positionals.join(' ').trim();
  if (!prompt) throw new UsageError('arbor run needs a PROMPT');
  const h = await Harness.open(harnessConfig(args, io.env));
  try {
    const agent = await h.createSession({ title: prompt.slice(0, 80) });
    wireOutput(h, agent.id, args, io);
    await agent.accept(prompt, { kind: 'user' });
    return await settleAndReport(h, agent.id, io);
  } finally {
    await h.close();
  }
};

const send: Command = async (args, io) => {
  const [id, ...rest] = args.positionals;
  const msg = rest.join(' ').trim();
  if (!id || !msg) throw new UsageError('arbor send needs a session ID and a MESSAGE');
  const h = await Harness.open(harnessConfig(args, io.env));
  try {
    if (!h.store.has(id)) throw new UsageError(`No session ${id} in ${h.store.dir}; see 'arbor sessions'.`);
    wireOutput(h, id, args, io);
    await h.send(id, msg);
    return await settleAndReport(h, id, io);
  } finally {
    await h.close();
  }
};

const sessions: Command = async (args, io) => {
  const store = await Store.open(storeDirOf(args, io.env));
  try {
    const list = [];
    for (const h of store.list()) {
      // No process runs a session here: a turn left open reads `interrupted` (a crash), never
      // settled. The store's summary (the one fold, kept with every append) — no log is read.
      const s = await store.summary(h.id).catch(() => undefined);
      list.push({ ...h, events: s ? s.length : null, ...(s ? { status: sessionStatus(s), ...(s.lastStopReason ? { lastStopReason: s.lastStopReason } : {}), tokens: s.tokens, reports: s.reports } : { status: 'unreadable' }) });
    }
    if (args.options.has('json')) io.out(JSON.stringify(list));
    else for (const s of list) io.out(`${s.id}  ${s.origin.padEnd(8)} ${s.status.padEnd(11)} ${String(s.events ?? '?').padStart(6)} events  ${s.createdAt}  ${s.title ?? ''}`);
    for (const p of store.problems) io.err(`warning: ${p.file} was moved aside to ${p.movedTo}: ${p.reason}`);
    return 0;
  } finally {
    await store.close();
  }
};

const log: Command = async (args, io) => {
  const [id] = args.positionals;
  if (!id) throw new UsageError('arbor log needs a session ID');
  const store = await Store.open(storeDirOf(args, io.env));
  try {
    if (!store.has(id)) throw new UsageError(`No session ${id} in ${store.dir}; see 'arbor sessions'.`);
    for (const e of await store.readEvents(id)) io.out(JSON.stringify(e));
    return 0;
  } finally {
    await store.close();
  }
};

export const COMMANDS: Record<string, Command> = { run, send, sessions, log, goal };

export const HELP = `arbor — a coding agent whose subagents form a tree you can steer

Usage:
  arbor run [options] PROMPT      run a new conversation until it settles
  arbor send [options] ID MESSAGE send a follow-up to a session (resumed from its log)
  arbor sessions [--json]         list sessions in the store
  arbor log ID                    print a session's events as JSON lines
  arbor goal set ID OBJECTIVE [--max-rounds N]
                                  give a conversation a goal, armed in this process: rounds run
                                  until it completes (exit 0), blocks or hits its limit (exit 1)
  arbor goal resume ID            arm it again and drive rounds (refused while rounds are used up)
  arbor goal pause|clear ID       pause the goal, or clear it
  arbor goal limit ID N           set its round limit (1-1000, not below the rounds started)

Options:
  --store DIR        session store (default: $ARBOR_STORE or WORKSPACE/.arbor/store)
  --workspace DIR    workspace folder (default: current folder)
  --base-url URL     OpenAI-compatible endpoint (default: $ARBOR_BASE_URL or ${'https://api.deepseek.com'})
  --model NAME       model name (default: $ARBOR_MODEL or deepseek-chat)
  --sandbox MODE     read-only | workspace-write (default) | full-access
  --approval MODE    never (default: actions needing approval are refused) | auto (allowed)
  --max-steps N      model calls per turn before giving up (default 50)
  --max-tokens N     max tokens per model reply
  --timeout MS       per-request timeout
  --json             every event as one JSON line on stdout

API key: ARBOR_API_KEY, else DEEPSEEK_API_KEY / OPENAI_API_KEY (not needed for a local --base-url).
Exit codes: 0 done, 1 the turn failed, 2 bad usage.`;
