import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { describeError } from '../errors';
import type { CheckpointChange, EventDraft, SessionEvent } from '../session/events';
import { readWhole } from '../tools/fsio';
import { recordedChange, type Shadows } from './shadow';

// A writing call's intent (decision 0059, amended in s49): before a file tool or a command may
// change the workspace, what it found there — the file's blob (written into the shadow first),
// or each root's tree — is left in the store, and removed once the step's record is in the
// node's log. A crash (kill -9) between the call's write and that record left the change in the
// workspace with no record, so a rewind past the turn never restored it. The next open records
// each cut call's change from what it found to what is there now, so it can be rewound.
//
// Written without an fsync: it covers the process dying (the kernel keeps what was written), not
// the machine losing power, and a writing call pays a small file's write for it, not a sync.

interface Base {
  sessionId: string;
  callId: string;
  tool: string;
  turnId?: string;
}
export type CallIntent = Base &
  ({ kind: 'file'; root: string; path: string; before: string | null } | { kind: 'roots'; trees: { root: string; tree: string }[] });

export interface RecoveredCalls {
  sessionId: string;
  /** The seq of the record written for the cut calls (none when nothing could be recorded). */
  seq?: number;
  files: number;
  /** Cut calls whose change could not be recorded (the tool, its file or roots, what failed): their intents stay for the next open. */
  unrecorded?: string[];
}

export interface CallRecoveryHost {
  shadows: Shadows;
  maxFileBytes: number;
  has(sessionId: string): boolean;
  events(sessionId: string): Promise<readonly SessionEvent[]>;
  log(sessionId: string): Promise<{ append(draft: EventDraft): Promise<SessionEvent> }>;
}

export class CallIntents {
  private made = false;
  constructor(private readonly storeDir: string) {}

  private get dir(): string {
    return path.join(this.storeDir, 'checkpoints', 'calls');
  }

  private file(sessionId: string, callId: string): string {
    return path.join(this.dir, `${createHash('sha1').update(`${sessionId}\0${callId}`).digest('hex')}.json`);
  }

  /** Leave the intent before the call runs: a small file, written on this thread (a step's calls fill the thread pool with their own writes). */
  write(intent: CallIntent): void {
    if (!this.made) {
      fs.mkdirSync(this.dir, { recursive: true });
      this.made = true;
    }
    fs.writeFileSync(this.file(intent.sessionId, intent.callId), JSON.stringify(intent));
  }

  /** The step's record holds these calls' changes, or they changed nothing: their intents go (at once, before the next step). */
  remove(sessionId: string, callIds: Iterable<string>): void {
    for (const id of callIds) {
      try {
        fs.rmSync(this.file(sessionId, id), { force: true });
      } catch {
        // left behind: the next open finds the call recorded and only removes it
      }
    }
  }

  /** At open, before any session runs: each cut call's change recorded in its node's log; every intent removed. */
  async recover(h: CallRecoveryHost): Promise<RecoveredCalls[]> {
    const names = (await fsp.readdir(this.dir).catch(() => [] as string[])).filter((n) => n.endsWith('.json'));
    const bySession = new Map<string, { name: string; intent: CallIntent }[]>();
    for (const name of names) {
      const intent = await fsp
        .readFile(path.join(this.dir, name), 'utf8')
        .then((t) => JSON.parse(t) as CallIntent)
        .catch(() => undefined);
      if (intent && h.has(intent.sessionId)) bySession.set(intent.sessionId, [...(bySession.get(intent.sessionId) ?? []), { name, intent }]);
    }
    const out: RecoveredCalls[] = [];
    // An intent whose change could not be recorded stays (said, and tried again at the next open):
    // removed, the change would be in the workspace with no record, which a rewind never restores.
    const kept = new Set<string>();
    for (const [sessionId, intents] of bySession) {
      const recorded = new Set<string>();
      for (const e of await h.events(sessionId)) if (e.type === 'checkpoint') for (const c of e.changes) recorded.add(c.callId);
      const changes: CheckpointChange[] = [];
      const unrecorded: string[] = [];
      for (const { name, intent } of intents) {
        if (recorded.has(intent.callId)) continue;
        try {
          changes.push(...(await changesOf(intent, h)));
        } catch (err) {
          kept.add(name);
          unrecorded.push(`${intent.tool} (${intent.kind === 'file' ? intent.path : intent.trees.map((t) => t.root).join(', ')}): ${describeError(err)}`);
        }
      }
      const failed = unrecorded.length ? { unrecorded } : {};
      if (changes.length === 0) {
        if (unrecorded.length) out.push({ sessionId, files: 0, ...failed });
        continue;
      }
      const turnId = intents.find((i) => i.intent.turnId)?.intent.turnId;
      const e = await (await h.log(sessionId)).append({ type: 'checkpoint', ...(turnId ? { turnId } : {}), changes });
      out.push({ sessionId, seq: e.seq, files: changes.length, ...failed });
    }
    for (const n of names) if (!kept.has(n)) await fsp.rm(path.join(this.dir, n), { force: true });
    return out;
  }
}

/** What the cut call changed: from what it found to what is there now (which may hold later edits: `recovered`). */
async function changesOf(i: CallIntent, h: CallRecoveryHost): Promise<CheckpointChange[]> {
  if (i.kind === 'file') {
    const shadow = await h.shadows.of(i.root);
    const st = await fsp.stat(i.path).catch(() => undefined);
    if (st && (!st.isFile() || st.size > h.maxFileBytes)) return [];
    // Through its folder pinned from the root (decision 0097): never a file outside through a link put on the way.
    const after = st ? await shadow.storeBlob(await readWhole(i.path, i.root)) : null;
    return after === i.before ? [] : [recordedChange({ path: i.path, before: i.before, after }, i.root, i.callId, i.tool, true)];
  }
  const out: CheckpointChange[] = [];
  for (const { root, tree } of i.trees) {
    const shadow = await h.shadows.of(root);
    const now = await shadow.snapshot(h.maxFileBytes);
    for (const d of await shadow.diff(tree, now.tree)) out.push(recordedChange(d, root, i.callId, i.tool, true));
  }
  return out;
}
