import type { CheckpointChange } from '../session/events';
import { readWholeSync } from '../tools/fsio';
import { type Held, RECORDED } from './capture';
import { blobId } from './objects';

/**
 * A step's changes in the order they happened, each to the call that made it (decision 0070). A
 * command's snapshots see whatever changed in its roots while it ran, so a file tool of the same
 * step that wrote meanwhile shows in the command's diff too. When the command's diff of a file
 * ends at what a file tool wrote, the end is the tool's: the command's part, if any, ends where
 * the tool found the file (the command wrote it first), and comes just before it.
 *
 * A rewind goes back to the first change's `before` and expects the file at the last one's
 * `after`. In the order the afters were seen, the first `before` can be a later look than another
 * change's (one call's window inside another's: a second command's first snapshot caught a file
 * the first had only just created): the change whose `before` was seen first then leads its
 * file's list. At worst the last `after` is then not the file's, and a rewind asks rather than
 * restore a state that was never the starting point.
 */
export function attribute(held: readonly Held[]): CheckpointChange[] {
  const byOrder = (a: Held, b: Held) => a.at - b.at;
  const tools = new Map<string, Held[]>();
  for (const h of [...held].sort(byOrder)) {
    if (RECORDED[h.change.tool]?.kind === 'file') tools.set(h.change.path, [...(tools.get(h.change.path) ?? []), h]);
  }
  const out: Held[] = [];
  for (const h of held) {
    const written = RECORDED[h.change.tool]?.kind === 'roots' ? tools.get(h.change.path) : undefined;
    if (!written?.some((t) => t.change.after === h.change.after)) {
      out.push(h);
      continue;
    }
    const first = written[0];
    if (h.change.before !== first.change.before) out.push({ change: { ...h.change, after: first.change.before }, since: h.since, at: first.at - 1e-3 });
  }
  out.sort(byOrder);
  const byPath = new Map<string, Held[]>();
  for (const h of out) byPath.set(h.change.path, [...(byPath.get(h.change.path) ?? []), h]);
  const leads = new Set<Held>();
  const tails = new Set<Held>();
  for (const list of byPath.values()) {
    if (list.length < 2) continue;
    const oldest = list.reduce((a, b) => (b.since < a.since ? b : a));
    const led = oldest !== list[0] && oldest.change.before !== list[0].change.before;
    if (led) leads.add(oldest);
    // A file tool's `at` is when its call returned, after the rename and its folder's fsync: a
    // command can write in between. The file as it is now says whose write came last.
    const now = blobNow(list[0].change.path, list[0].change.root);
    const last = list[list.length - 1];
    const ends =
      now === undefined || last.change.after === now
        ? undefined
        : list.find((h) => h !== last && h.change.after === now && !leads.has(h) && !(led && h === list[0]));
    if (ends) tails.add(ends);
  }
  // Each file's leading change moves to just before its file's first, its ending one to just after its last: the order elsewhere stays.
  return out.flatMap((h) => {
    if (leads.has(h) || tails.has(h)) return [];
    const list = byPath.get(h.change.path) ?? [];
    const lead = list[0] === h ? [...leads].find((l) => l.change.path === h.change.path) : undefined;
    const tail = list[list.length - 1] === h ? [...tails].find((t) => t.change.path === h.change.path) : undefined;
    return [...(lead ? [lead.change] : []), h.change, ...(tail ? [tail.change] : [])];
  });
}

/** A file's blob id now (null: absent), undefined when it cannot be read. Read only for a file two calls of one step changed. */
function blobNow(file: string, root: string): string | null | undefined {
  try {
    return blobId(readWholeSync(file, root));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? null : undefined;
  }
}
