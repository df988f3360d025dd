import { CRASHED_DURING_TURN } from './agent/agent';
import { SessionWriter } from './agent/session-writer';
import { removePrivateTmp } from './remote/private-tmp';
import { reapOrphans } from './remote/reaper';
import type { CompactionEndEvent, SessionEvent } from './session/events';
import { descriptorOf, lastTurnText } from './session/folds';
import type { Session } from './session/session';
import { estimateTokens } from './session/summary';
import type { Store } from './store/store';
import { WorkflowEngine } from './workflow/engine';

/**
 * After a crash, every session whose last turn is open is closed as `interrupted` ("the
 * process ended during this turn"), and each direct parent of an interrupted subagent gets
 * exactly one settlement notice for it, recorded as history: nothing runs by itself; the
 * user or the parent decides. Runs at open, before any agent is resident; returns the ids
 * whose turn it closed.
 */
export async function recoverInterrupted(store: Store): Promise<string[]> {
  const closed: { id: string; parent?: string; label: string; text: string }[] = [];
  for (const header of store.list()) {
    let s: Session;
    try {
      // The summary says whether a turn is open; folding it here (one read of each log) also
      // leaves every summary known, so the panel opening next reads no log again.
      const sum = await store.summary(header.id);
      if (!sum.openTurn && !sum.openCompaction) continue;
      s = await store.inspect(header.id);
    } catch {
      continue; // an unreadable log is reported where it is read; recovery skips it
    }
    const w = new SessionWriter(s, store);
    // A compaction a crash cut ends aborted, its request's prompt counted — also one the user asked for, outside any turn.
    const compaction = s.openCompactionId;
    if (compaction) await w.append({ type: 'compaction/end', compactionId: compaction, outcome: 'aborted', ...cutSummaryRequest(s.events, compaction) });
    if (!s.openTurnId) continue;
    reapOrphans(s.events); // a remote child's program outlived the crash: its group goes first (issue 13)
    await removePrivateTmp(store.dir, header.id); // then the private temp folder its program had (decision 0122, amended s60)
    await WorkflowEngine.closeOutlived(w, undefined, (runId) => WorkflowEngine.childrenOfRun(store, header.id, runId)); // never re-run: closed as interrupted
    await w.append({ type: 'turn/end', turnId: s.openTurnId, stopReason: 'interrupted', error: CRASHED_DURING_TURN });
    const d = descriptorOf(s.header, s.events);
    // A workflow's child gets no notice of its own: its run's workflow/end speaks for all of them.
    closed.push({
      id: header.id,
      ...(d && !d.workflow && header.parentSession ? { parent: header.parentSession } : {}),
      label: d?.label || header.id,
      text: lastTurnText(s.events),
    });
  }
  // One notice per interrupted child, in its parent's log (fresh read: the parent may have
  // had a turn of its own closed above).
  const byParent = new Map<string, typeof closed>();
  for (const c of closed) if (c.parent && store.has(c.parent)) byParent.set(c.parent, [...(byParent.get(c.parent) ?? []), c]);
  for (const [parent, kids] of byParent) {
    const w = new SessionWriter(await store.inspect(parent), store);
    for (const k of kids) {
      await w.append({
        type: 'user/message',
        text: `[subagent ${k.label} settled: interrupted]\n${CRASHED_DURING_TURN}${k.text ? `\n${k.text}` : ''}`,
        source: { kind: 'subagent-settled', fromSession: k.id, stopReason: 'interrupted' },
      });
    }
  }
  return closed.map((c) => c.id);
}

/**
 * What a compaction's summary request a crash cut spent, as far as the log knows: its prompt from
 * the bytes its start recorded (as a turn's cut request is counted from its `request/header`),
 * estimated; nothing when no request was about to go out.
 */
function cutSummaryRequest(events: readonly SessionEvent[], compactionId: string): Pick<CompactionEndEvent, 'model' | 'usage' | 'estimated'> {
  let start: SessionEvent | undefined;
  for (let i = events.length - 1; i >= 0 && !start; i--) {
    const e = events[i];
    if (e.type === 'compaction/start' && e.compactionId === compactionId) start = e;
  }
  if (start?.type !== 'compaction/start' || start.bytes === undefined) return {};
  return { model: start.model ?? '', usage: { promptTokens: estimateTokens(start.bytes), completionTokens: 0 }, estimated: true };
}
