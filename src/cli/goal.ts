import { GoalError, type GoalSnapshot } from '../core/goal/snapshot';
import type { Harness } from '../core/harness';
import { type ParsedArgs, UsageError } from './args';
import { turnConfig } from './config';
import { openHarness } from './open-harness';
import { type Command, type Io, wireOutput } from './output';

/** One line for a goal: `active · 2/10`, the block reason, the note. */
function describeGoal(g: GoalSnapshot | null): string {
  if (!g) return 'goal: none (cleared)';
  const why = g.blocked ? ` (${g.blocked.code}: ${g.blocked.message})` : '';
  return `goal: ${g.phase} · ${g.roundsStarted}/${g.maxGoalRounds}${why}${g.note ? ` — ${g.note}` : ''}`;
}

/** `--max-rounds N` when given: a whole number (range checked by the goal service). */
function maxRoundsOf(args: ParsedArgs): number | undefined {
  const v = args.options.get('max-rounds');
  if (v === undefined) return undefined;
  const n = v === true ? Number.NaN : Number(v);
  return n;
}

type Sub = (h: Harness, id: string, rest: string[], args: ParsedArgs, io: Io) => Promise<number>;

/**
 * set and resume arm the goal in this process and drive its rounds (settle never returns
 * between two) until it completes (exit 0), or blocks, pauses or hits its limit (exit 1).
 */
const drive = async (h: Harness, id: string, _args: ParsedArgs, io: Io): Promise<number> => {
  await h.settle();
  const { goal } = await h.goals.state(id);
  io.err(describeGoal(goal));
  io.err(`session ${id}`);
  return goal?.phase === 'complete' ? 0 : 1;
};

const SUBS: Record<string, Sub> = {
  set: async (h, id, rest, args, io) => {
    const objective = rest.join(' ').trim();
    if (!objective) throw new UsageError('arbor goal set needs a session ID and an OBJECTIVE');
    wireOutput(h, id, args, io);
    await h.goals.set(id, objective, maxRoundsOf(args));
    return drive(h, id, args, io);
  },
  resume: async (h, id, _rest, args, io) => {
    wireOutput(h, id, args, io);
    await h.goals.resume(id);
    return drive(h, id, args, io);
  },
  pause: async (h, id, _rest, _args, io) => {
    io.err(describeGoal(await h.goals.pause(id)));
    return 0;
  },
  clear: async (h, id, _rest, _args, io) => {
    io.err(describeGoal(await h.goals.clear(id)));
    return 0;
  },
  limit: async (h, id, rest, _args, io) => {
    if (rest.length !== 1) throw new UsageError('arbor goal limit needs a session ID and a round limit N');
    io.err(describeGoal(await h.goals.limit(id, Number(rest[0]))));
    return 0;
  },
};

export const goal: Command = async (args, io) => {
  const [sub, id, ...rest] = args.positionals;
  const fn = sub && Object.hasOwn(SUBS, sub) ? SUBS[sub] : undefined;
  if (!fn) throw new UsageError(`arbor goal needs one of ${Object.keys(SUBS).join(', ')}`);
  if (!id) throw new UsageError(`arbor goal ${sub} needs a session ID`);
  const h = await openHarness(turnConfig(args, io.env), io);
  try {
    if (!h.store.has(id)) throw new UsageError(`No session ${id} in ${h.store.dir}; see 'arbor sessions'.`);
    return await fn(h, id, rest, args, io);
  } catch (err) {
    // A refused goal operation: the code and what to do, exit 1 (bad numbers are bad usage: 2).
    if (err instanceof GoalError && err.code === 'BAD_MAX_ROUNDS') throw new UsageError(err.message);
    if (err instanceof GoalError) {
      io.err(`arbor: ${err.code}: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await h.close();
  }
};
