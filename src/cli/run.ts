import type { Harness } from '../core/harness';
import { describePidNamespace, pidNamespace } from '../core/remote/pid-namespace';
import { UsageError } from './args';
import { budgetOf, turnConfig } from './config';
import { mcpReady } from './mcp';
import { openHarness } from './open-harness';
import { type Command, type Io, wireOutput } from './output';
import { onStopSignals } from './stop-signals';

// `arbor run` and `arbor send`: the two commands that drive turns (loaded by commands.ts on use).

/** Drive the session and every descendant until all have settled; the exit code follows the session's own last turn. */
async function settleAndReport(h: Harness, id: string, io: Io): Promise<number> {
  await h.settle();
  const session = await h.readSession(id);
  let last: string | undefined;
  for (const e of session.events) if (e.type === 'turn/end') last = e.stopReason;
  io.err(`session ${id}`);
  return last === 'completed' ? 0 : 1;
}

/**
 * Once per process: where no OS sandbox can start, say so, and what commands do instead; where
 * remote programs are configured but get no PID namespace, say what a stop cannot reach.
 */
async function warnUnconfined(h: Harness, io: Io): Promise<void> {
  const remote = h.config.remote;
  if (remote && (remote.codex || remote.claudeCode || remote.dshSdk || remote.acp?.length)) {
    const ns = await pidNamespace();
    if (!ns.available) io.err(`arbor: ${describePidNamespace(ns)}.`);
  }
  const checkpoints = await h.checkpoints.notice();
  if (checkpoints) io.err(`arbor: ${checkpoints}`);
  const status = await h.sandboxStatus();
  if (status.available || h.config.sandbox === 'full-access') return;
  const instead = h.config.approval === 'never' ? 'every command is refused (--approval never)' : 'every command runs unconfined, approved by --approval auto';
  io.err(`arbor: no OS sandbox: ${status.reason}; ${instead}. To run commands confined, ${status.remedy}.`);
}

/**
 * The probes behind those warnings (bubblewrap, git, the PID namespace) are processes to start
 * and wait for: they run beside the session's start and its first request, not before them
 * (decision 0068). A command the model runs waits for the same cached sandbox probe anyway.
 */
function probesBeside(h: Harness, io: Io): Promise<void> {
  const warned = warnUnconfined(h, io);
  warned.catch(() => undefined); // awaited by the caller once the turn is under way
  return warned;
}

export const run: Command = async (args, io) => {
  const prompt = args.positionals.join(' ').trim();
  if (!prompt) throw new UsageError('arbor run needs a PROMPT');
  const budget = budgetOf(args);
  // (A bare --agent is refused by the parser: it takes a value.)
  const named = args.options.get('agent') as string | undefined;
  const h = await openHarness(turnConfig(args, io.env), io);
  const stop = onStopSignals(io);
  try {
    const warned = probesBeside(h, io);
    await mcpReady(h, io);
    const agent = await h.createSession({ title: prompt.slice(0, 80), ...(named ? { agent: named } : {}) });
    if (budget) await h.setBudget(agent.id, budget);
    wireOutput(h, agent.id, args, io);
    await agent.accept(prompt, { kind: 'user' });
    await warned;
    return await Promise.race([settleAndReport(h, agent.id, io), stop.signalled]);
  } finally {
    // Closing ends every running turn and stops every remote program (Ctrl+C: bounded, then killed).
    await h.close();
    stop.finish();
    stop.dispose();
  }
};

export const send: Command = async (args, io) => {
  const [id, ...rest] = args.positionals;
  const msg = rest.join(' ').trim();
  if (!id || !msg) throw new UsageError('arbor send needs a session ID and a MESSAGE');
  const budget = budgetOf(args);
  const h = await openHarness(turnConfig(args, io.env), io);
  const stop = onStopSignals(io);
  try {
    if (!h.store.has(id)) throw new UsageError(`No session ${id} in ${h.store.dir}; see 'arbor sessions'.`);
    // The human raises (or, with "none", removes) the budget before the message goes on.
    if (budget !== undefined) await h.setBudget(id, budget);
    const warned = probesBeside(h, io);
    await mcpReady(h, io);
    wireOutput(h, id, args, io);
    await h.send(id, msg);
    await warned;
    return await Promise.race([settleAndReport(h, id, io), stop.signalled]);
  } finally {
    await h.close();
    stop.finish();
    stop.dispose();
  }
};
