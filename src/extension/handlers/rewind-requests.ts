import { randomUUID } from 'node:crypto';
import type { RewindChoice } from '../../core/checkpoint/apply';
import type { RewindPlan } from '../../core/checkpoint/plan';
import type { RewindPreview } from '../../protocol';
import type { HandlerContext, RequestHandlers } from './context';

/** Previews kept for their apply; a panel has one open at a time, a few tabs may have theirs. */
const KEPT_PREVIEWS = 16;

/** The panel's rewind (decision 0059): a preview first (nothing written), then the apply of that very preview. */
export function rewindRequests(c: HandlerContext): Pick<RequestHandlers, 'rewind/preview' | 'rewind/apply'> {
  const plans = new Map<string, RewindPlan>();
  return {
    'rewind/preview': async (_port, m) => {
      const h = await c.ensure();
      const plan = m.undo
        ? await h.checkpoints.planUndo(m.sessionId, m.seq)
        : await h.checkpoints.plan({ sessionId: m.sessionId, toSeq: m.seq, subtree: m.subtree });
      const token = randomUUID();
      plans.set(token, plan);
      for (const k of plans.keys()) if (plans.size > KEPT_PREVIEWS) plans.delete(k);
      return { preview: previewOf(token, plan) };
    },
    'rewind/apply': async (port, m) => {
      const h = await c.ensure();
      let restored = 0;
      let kept = 0;
      let undoSeq: number | undefined;
      if (m.what !== 'conversation') {
        const plan = m.token ? plans.get(m.token) : undefined;
        if (!plan || plan.sessionId !== m.sessionId)
          throw new Error('This preview was applied already or is no longer kept; choose Rewind… again to see a fresh one.');
        // The very point previewed: the files and a fork of the conversation never go back to two different points.
        if ((plan.undoes ?? plan.toSeq) !== m.seq) throw new Error('This preview is of another point of the conversation; choose Rewind… again at this one.');
        const choices: Record<string, RewindChoice> = {};
        for (const [i, f] of plan.files.entries()) {
          const choice = m.choices[i];
          if (choice) choices[f.path] = choice;
        }
        const out = await h.checkpoints.apply(plan, choices);
        plans.delete(m.token!);
        restored = out.restored.length;
        kept = out.kept.length;
        if (plan.undoes === undefined) undoSeq = out.seq;
      }
      const forkId = m.what === 'files' ? undefined : await c.forkAndShow(m.sessionId, m.seq, port.view);
      return { restored, kept, ...(undoSeq !== undefined ? { undoSeq } : {}), ...(forkId ? { forkId } : {}) };
    },
  };
}

function previewOf(token: string, plan: RewindPlan): RewindPreview {
  return {
    token,
    undo: plan.undoes !== undefined,
    files: plan.files.map((f) => ({
      path: f.relative,
      action: f.restore === null ? 'remove' : f.current === null ? 'create' : 'restore',
      diff: f.diff,
      ...(f.conflict ? { conflict: { reason: f.conflict.reason, text: f.conflict.text } } : {}),
    })),
  };
}
