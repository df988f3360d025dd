import { sessionStatus } from '../core/session/status';
import { Harness } from '../core/harness';
import type { SessionEvent } from '../core/session/events';
import { Store } from '../core/store/store';
import { UsageError, type ParsedArgs } from './args';
import { harnessConfig, storeDirOf } from './config';
import { goal } from './goal';
import { acpCommand } from './acp';

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
  else if (e.type === 'workflow/phase' || e.type === 'workflow/end') io.err(`${tag}workflow ${e.runId}: ${e.type === 'workflow/phase' ? String(e.data?.title) : `${String(e.data?.status)}${e.data?.code ? ` (${String(e.data.code)})` : ''}`}`);
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

/** Once per process: where no OS sandbox can start, say so, and what commands do instead. */
async function warnUnconfined(h: Harness, io: Io): Promise<void> {
  const status = await h.sandboxStatus();
  if (status.available || h.config.sandbox === 'full-access') return;
  const instead = h.config.approval === 'never' ? 'every command is refused (--approval never)' : 'every command runs unconfined, approved by --approval auto';
  io.err(`arbor: no OS sandbox: ${status.reason}; ${instead}. To run commands confined, ${status.remedy}.`);
}

const run: Command = async (args, io) => {
  const prompt = args.positionals.join(' ').trim();
  if (!prompt) throw new UsageError('arbor run needs a PROMPT');
  const h = await Harness.open(harnessConfig(args, io.env));
  try {
    await warnUnconfined(h, io);
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
    await warnUnconfined(h, io);
    wireOutput(h, id, args, io);
    await h.send(id, msg);
    return await settleAndReport(h, id, io);
  } finally {
    await h.close();
  }
};

const sessions: Command = async (args, io) => {
  const store = await Store.open(storeDirOf(args, io.env), { mustExist: true });
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
  const store = await Store.open(storeDirOf(args, io.env), { mustExist: true });
  try {
    if (!store.has(id)) throw new UsageError(`No session ${id} in ${store.dir}; see 'arbor sessions'.`);
    for (const e of await store.readEvents(id)) io.out(JSON.stringify(e));
    return 0;
  } finally {
    await store.close();
  }
};

export const COMMANDS: Record<string, Command> = { run, send, sessions, log, goal, acp: acpCommand };
