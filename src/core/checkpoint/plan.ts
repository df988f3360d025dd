import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CheckpointChange, CheckpointEvent, SessionEvent } from '../session/events';
import { unifiedDiff } from '../tools/diff';
import { looksBinary, readWholeSync } from '../tools/fsio';
import { blobId } from './objects';
import type { Shadows } from './shadow';

// Planning a rewind (decision 0059): which files go back, to what, and where a human must choose.
// Nothing is written here. The rewound set is the node (and with `subtree` its descendants); a
// file goes back to what it was before the set's first change after the point. A file that a
// node outside the set changed after that first change, or whose content is not what the set
// last left or was changed between the set's changes (the user edited it), is a conflict: the
// plan shows it and the caller chooses.

export type ConflictReason = 'changed-by-other' | 'edited-since' | 'unavailable';

export interface RewindFile {
  path: string;
  root: string;
  /** `path` relative to its root, `/`-separated: what a human is shown. */
  relative: string;
  /** Blob id of the content now (null: absent). */
  current: string | null;
  /** Blob id it goes back to (null: it is removed). */
  restore: string | null;
  /** Unified diff current → restored (a placeholder line for binary content). */
  diff: string;
  /** Made again (absent now), it is made executable: it was when it is restored to. */
  executable?: true;
  conflict?: { reason: ConflictReason; text: string; by?: string[] };
}

export interface RewindPlan {
  sessionId: string;
  /** The point rewound to (a seq of the node's log); absent for an undo. */
  toSeq?: number;
  /** The seq of the rewind record this plan undoes. */
  undoes?: number;
  subtree: boolean;
  /** The rewound set: the node, then its descendants with `subtree`. */
  sessions: string[];
  files: RewindFile[];
}

export interface PlanHost {
  shadows: Shadows;
  events(id: string): Promise<readonly SessionEvent[]>;
  /** Descendants of a session, breadth-first (the store's tree). */
  descendants(id: string): string[];
  /** Every session of the conversation tree `id` belongs to. */
  treeOf(id: string): string[];
  /** A session's name for a human (never a raw id). */
  nameOf(id: string): string;
}

/** The bytes each planned file goes back to, read while planning: apply reuses them (a plan applied later from JSON reads them again). */
export const restoredBytes = new WeakMap<RewindFile, Buffer>();

export class RewindError extends Error {
  constructor(
    readonly code: 'NO_SUCH_SEQ' | 'NOT_A_REWIND' | 'CONFLICT' | 'STALE_PLAN' | 'DISABLED' | 'NO_SESSION' | 'PARTIAL' | 'BUSY',
    message: string,
  ) {
    super(message);
  }
}

interface Dated {
  at: string;
  sessionId: string;
  seq: number;
  change: CheckpointChange;
}

/** Tools that write a file's bytes and keep its mode: their changes do not say what the mode was. */
const KEEP_MODE = new Set(['write_file', 'edit_file']);

const checkpoints = (events: readonly SessionEvent[]): CheckpointEvent[] => events.filter((e): e is CheckpointEvent => e.type === 'checkpoint');

export async function planRewind(h: PlanHost, req: { sessionId: string; toSeq: number; subtree: boolean }): Promise<RewindPlan> {
  const own = await h.events(req.sessionId);
  const point = own.find((e) => e.seq === req.toSeq);
  if (!point) {
    throw new RewindError(
      'NO_SUCH_SEQ',
      `This conversation has no event ${req.toSeq} (its log ends at ${own.length - 1}); pick a seq that \`arbor log\` prints.`,
    );
  }
  const sessions = [req.sessionId, ...(req.subtree ? h.descendants(req.sessionId) : [])];
  const inSet = new Set(sessions);
  const mine: Dated[] = [];
  for (const id of sessions) {
    const events = id === req.sessionId ? own : await h.events(id);
    for (const e of checkpoints(events)) {
      // The node's own log is ordered by seq; a descendant's changes count from the point's time on.
      const after = id === req.sessionId ? e.seq > req.toSeq : e.at >= point.at;
      if (after) for (const change of e.changes) mine.push({ at: e.at, sessionId: id, seq: e.seq, change });
    }
  }
  const others: Dated[] = [];
  for (const id of h.treeOf(req.sessionId)) {
    if (inSet.has(id)) continue;
    for (const e of checkpoints(await h.events(id))) {
      if (e.at >= point.at) for (const change of e.changes) others.push({ at: e.at, sessionId: id, seq: e.seq, change });
    }
  }
  const order = (a: Dated, b: Dated) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.sessionId === b.sessionId ? a.seq - b.seq : 0);
  mine.sort(order);
  const byPath = new Map<string, Dated[]>();
  // Pushed, not copied: the node's log holds every earlier rewind's and undo's record of each file
  // (200 changes apiece), so after 80 rewinds a path's list is 160 long.
  for (const d of mine) {
    const list = byPath.get(d.change.path);
    if (list) list.push(d);
    else byPath.set(d.change.path, [d]);
  }

  // Each file is a read, a hash, a blob read and a diff, independent of the others. The reads are
  // synchronous (small files, in the page cache): hundreds of them through libuv's four threads
  // queued behind each other and whatever else the host had in flight (issue 25).
  await settle(h, mine);
  const there = rootsThere();
  const planned = await Promise.all(
    [...byPath].map(async ([file, list]) => {
      const first = list[0];
      const last = list[list.length - 1];
      const by = [...new Set(others.filter((o) => o.change.path === file && o.at >= first.at).map((o) => o.sessionId))];
      // The file tools keep a file's mode: the first change that read it says what it was at the point.
      const moded = list.find((d) => !KEEP_MODE.has(d.change.tool));
      const entry = await fileOf(
        h,
        there,
        first.change.root,
        file,
        first.change.before,
        last.change.after,
        last.change.recovered,
        moded?.change.beforeExecutable,
      );
      if (entry && !entry.conflict && editedBetween(list, others)) {
        entry.conflict = {
          reason: 'edited-since',
          text: `${entry.relative} was changed between the rewound agents' writes (by you or another program); restoring it would discard that change too.`,
        };
      }
      if (entry && entry.conflict?.reason !== 'unavailable' && by.length) {
        entry.conflict = {
          reason: 'changed-by-other',
          by,
          text: `${by.map((id) => h.nameOf(id)).join(', ')} also changed ${entry.relative} after this point; restoring it would undo their change too.`,
        };
      }
      return entry;
    }),
  );
  const files = planned.filter((f): f is RewindFile => f !== undefined);
  files.sort((a, b) => (a.path < b.path ? -1 : 1));
  return { sessionId: req.sessionId, toSeq: req.toSeq, subtree: req.subtree, sessions, files };
}

/**
 * Whether a file was changed between two of the set's changes by something Arbor did not record:
 * a later change found content no recorded change left there (and not what it goes back to).
 * Within one step, parallel calls may each have seen the file before the other wrote it: any
 * content a recorded change left (or started from) counts as explained.
 */
function editedBetween(list: readonly Dated[], others: readonly Dated[]): boolean {
  const known = new Set<string | null>([list[0].change.before]);
  for (const d of [...list, ...others]) if (d.change.path === list[0].change.path) known.add(d.change.after);
  return list.slice(1).some((d) => !known.has(d.change.before));
}

/** Undo a rewind: every file it restored goes back to what the rewind found there. */
export async function planUndo(h: PlanHost, req: { sessionId: string; seq: number }): Promise<RewindPlan> {
  const e = (await h.events(req.sessionId)).find((x) => x.seq === req.seq);
  if (e?.type !== 'checkpoint' || !e.rewind) {
    throw new RewindError('NOT_A_REWIND', `Event ${req.seq} of this conversation is not a rewind, so there is nothing to undo; pick the rewind's own event.`);
  }
  await settle(
    h,
    e.changes.map((change) => ({ change })),
  );
  const there = rootsThere();
  const files = (await Promise.all(e.changes.map((c) => fileOf(h, there, c.root, c.path, c.before, c.after, undefined, c.beforeExecutable)))).filter(
    (f): f is RewindFile => f !== undefined,
  );
  return { sessionId: req.sessionId, undoes: req.seq, subtree: e.rewind.subtree, sessions: e.rewind.sessions, files };
}

/** Whether a root folder exists, asked once per root in one plan (not once per file: a plan's 200 files have one root). */
function rootsThere(): (root: string) => boolean {
  const known = new Map<string, boolean>();
  return (root) => {
    let there = known.get(root);
    if (there === undefined) known.set(root, (there = fs.existsSync(root)));
    return there;
  };
}

/** One file's entry: undefined when it already is what it would go back to. */
async function fileOf(
  h: PlanHost,
  rootThere: (root: string) => boolean,
  root: string,
  file: string,
  restore: string | null,
  lastLeft: string | null,
  /** `lastLeft` was found at an open after a crash, not seen written: it may hold a human's edit. */
  lastLeftRecovered?: boolean,
  executable?: true,
): Promise<RewindFile | undefined> {
  const shadow = await h.shadows.of(root);
  const relative = shadow.relative(file) ?? path.basename(file);
  // The folder it was changed in is gone (a worktree child's, applied or discarded): nothing there
  // to restore, and nothing of it is made again; what an apply brought into the workspace is not
  // this file, and the plan says so rather than name it as if it were.
  // Left as it is, and said: the file goes back no further.
  const unavailable = (text: string): RewindFile => ({
    path: file,
    root,
    relative,
    current: null,
    restore,
    diff: '',
    conflict: { reason: 'unavailable', text },
  });
  if (!rootThere(root)) {
    return unavailable(
      `${relative} was changed in a worktree (or folder) that is gone now (${root}), so it cannot be restored there; if that worktree was applied, its change is in your own files now: undo it there.`,
    );
  }
  const now = fileNowOrUndefined(file);
  if (now === undefined) {
    // A folder, a link or a FIFO stands where the file was: the user's (or another program's),
    // never read through nor replaced; the rest of the rewind goes on without it.
    return unavailable(
      `${relative} is now a folder, a symbolic link or another non-file, so it is left as it is; to restore the file, move that away and preview the rewind again.`,
    );
  }
  const current = now === null ? null : blobId(now);
  if (current === restore) return undefined;
  const restored = restore === null ? null : shadow.blobNow(restore);
  const entry: RewindFile = { path: file, root, relative, current, restore, diff: '', ...(executable && restore !== null ? { executable } : {}) };
  if (restore !== null && !restored) {
    entry.conflict = {
      reason: 'unavailable',
      text: `The earlier content of ${relative} is no longer in the checkpoint store, so it cannot be restored; keep it as it is.`,
    };
    return entry;
  }
  if (restored) restoredBytes.set(entry, restored);
  entry.diff = diffOf(now, restored ?? null, relative);
  if (current !== lastLeft) {
    entry.conflict = {
      reason: 'edited-since',
      text: `${relative} was changed after the rewound agents last wrote it (by you or another program); restoring it would discard that change.`,
    };
  } else if (lastLeftRecovered) {
    entry.conflict = {
      reason: 'edited-since',
      text: `${relative} was last written by a call that a crash cut short; what it left was found when Arbor next opened, so an edit made before then (by you or another program) cannot be told apart from the agent's; restoring it would discard any such edit.`,
    };
  }
  return entry;
}

/** Every blob queued in the shadows of these changes' roots is written (so `blobNow` finds it). */
async function settle(h: PlanHost, changes: readonly { change: CheckpointChange }[]): Promise<void> {
  const roots = [...new Set(changes.map((d) => d.change.root))];
  await Promise.all(roots.map(async (root) => (await h.shadows.of(root)).settled()));
}

/** What reading a path throws when a folder, a link, a FIFO or a socket (open says ENXIO) stands there, not a file. */
export const NOT_A_FILE: ReadonlySet<string> = new Set(['ENOTFILE', 'ELOOP', 'EISDIR', 'ENXIO']);

/** `currentBytesNow`, with undefined where a folder, a link or a socket stands (never read through). */
export function fileNowOrUndefined(file: string): Buffer | null | undefined {
  try {
    return currentBytesNow(file);
  } catch (e) {
    if (NOT_A_FILE.has((e as NodeJS.ErrnoException).code ?? '')) return undefined;
    throw e;
  }
}

/** `currentBytes` on the calling thread. */
export function currentBytesNow(file: string): Buffer | null {
  try {
    return readWholeSync(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw e;
  }
}

function diffOf(now: Buffer | null, restored: Buffer | null, name: string): string {
  if ((now && looksBinary(now)) || (restored && looksBinary(restored))) {
    return `Binary file ${name}: ${now ? `${now.length} bytes` : 'absent'} → ${restored ? `${restored.length} bytes` : 'removed'}`;
  }
  // Whether the file is removed or created again is the entry's action (restore null, current null), not the diff's.
  return unifiedDiff(now?.toString('utf8') ?? '', restored?.toString('utf8') ?? '', name);
}
