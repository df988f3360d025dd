import type { RewindChoice } from '../core/checkpoint/apply';
import { RewindError, type RewindPlan } from '../core/checkpoint/plan';
import { oneOf, type ParsedArgs, UsageError } from './args';
import { harnessConfig } from './config';
import { openHarness } from './open-harness';
import type { Command } from './output';

// `arbor rewind ID --to SEQ [--files|--conversation|--both] [--subtree] [--dry-run]
// [--on-conflict keep|restore]`, and `arbor rewind ID --undo SEQ` (decision 0059): the preview
// is printed first; a conflict without a choice prints it and exits 1 having changed nothing.

type What = 'files' | 'conversation' | 'both';

function whatOf(args: ParsedArgs): What {
  const picked = (['files', 'conversation', 'both'] as const).filter((w) => args.options.has(w));
  if (picked.length > 1) throw new UsageError(`Give one of --files, --conversation, --both (got ${picked.map((p) => `--${p}`).join(' ')}).`);
  return picked[0] ?? 'files';
}

function seqOf(name: string, v: string | true | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v === true || !Number.isSafeInteger(n) || n < 0)
    throw new UsageError(`--${name} needs the seq of an event, as 'arbor log ID' prints it (a whole number).`);
  return n;
}

/** The preview a human reads: each file, what it goes back to, its diff; conflicts said in words. */
export function previewLines(plan: RewindPlan): string[] {
  if (plan.files.length === 0) return ['No file to rewind: nothing this conversation changed after that point differs from then.'];
  const out: string[] = [];
  for (const f of plan.files) {
    const what = f.restore === null ? 'remove' : f.current === null ? 'create again' : 'restore';
    out.push(`${f.conflict ? 'CONFLICT ' : ''}${what} ${f.relative}`);
    if (f.conflict) out.push(`  ${f.conflict.text}`);
    if (f.diff) out.push(...f.diff.split('\n').map((l) => `  ${l}`));
  }
  return out;
}

export const rewindCommand: Command = async (args, io) => {
  const [id] = args.positionals;
  if (!id) throw new UsageError("arbor rewind needs a session ID (see 'arbor sessions') and --to SEQ (see 'arbor log ID').");
  const to = seqOf('to', args.options.get('to'));
  const undo = seqOf('undo', args.options.get('undo'));
  if ((to === undefined) === (undo === undefined))
    throw new UsageError("arbor rewind needs --to SEQ (a seq 'arbor log ID' prints) or --undo SEQ (a rewind's seq).");
  const what = whatOf(args);
  const onConflict = args.options.has('on-conflict')
    ? oneOf<RewindChoice>('on-conflict', args.options.get('on-conflict'), ['keep', 'restore'], 'keep')
    : undefined;
  const dry = args.options.has('dry-run');
  // Rewinding never calls the model: no API key is needed.
  const h = await openHarness(harnessConfig(args, { ...io.env, ARBOR_API_KEY: io.env.ARBOR_API_KEY || 'not-used-by-arbor-rewind' }), io);
  try {
    if (!h.store.has(id)) throw new UsageError(`No session ${id} in ${h.store.dir}; see 'arbor sessions'.`);
    if (what !== 'conversation' || undo !== undefined) {
      const plan =
        undo !== undefined
          ? await h.checkpoints.planUndo(id, undo)
          : await h.checkpoints.plan({ sessionId: id, toSeq: to!, subtree: args.options.has('subtree') });
      for (const l of previewLines(plan)) io.out(l);
      const unresolved = plan.files.filter((f) => f.conflict && f.conflict.reason !== 'unavailable');
      if (dry) io.err(`arbor: dry run: nothing was written (${plan.files.length} file(s) would change).`);
      else if (unresolved.length && !onConflict) {
        io.err(
          `arbor: nothing was changed: ${unresolved.length} file(s) conflict. Rerun with --on-conflict keep (leave them) or --on-conflict restore (overwrite them).`,
        );
        return 1;
      } else {
        const out = await h.checkpoints.apply(plan, {}, onConflict);
        io.err(`arbor: rewound ${out.restored.length} file(s)${out.kept.length ? `, kept ${out.kept.length}` : ''}.`);
        if (out.seq !== undefined && undo === undefined) io.err(`arbor: to undo it: arbor rewind ${id} --undo ${out.seq}`);
      }
    }
    if (what !== 'files' && undo === undefined) {
      if (dry) io.err(`arbor: dry run: the conversation would be forked at event ${to}.`);
      else {
        const fork = await h.forkSession(id, to!);
        io.out(`forked ${fork.id}`);
        io.err(`arbor: the conversation was forked at event ${to}: continue it with arbor send ${fork.id} MESSAGE`);
      }
    }
    return 0;
  } catch (e) {
    if (e instanceof RewindError) {
      io.err(`arbor: ${e.message}`);
      return 1;
    }
    throw e;
  } finally {
    await h.close();
  }
};
