// How one group commit's writes become journal records (decision 0088).

/** A write waiting in a journaled file's queue. */
export interface Pending<P> {
  payloads: P[];
  /** A checkpoint request: it runs in queue order, after the writes queued before it. */
  checkpoint?: true;
  resolve(): void;
  reject(err: unknown): void;
}

/** A group commit's writes as they go to the journal: one record, or one per write. */
export interface Admitted<P> {
  accepted: Pending<P>[];
  /** Applied in this order, live as on replay of `record`. */
  ops: P[];
  record: Buffer;
  /** Records in `record` (lsns used from the first one given). */
  records: number;
}

export interface GroupHooks<P> {
  /** Refuse a payload against durable state plus `batch`, the scratch of the earlier payloads of the group. */
  check?(payload: P, batch: Map<string, unknown>): void;
  /** The group's payloads, in order, as fewer payloads with the same effect (the given ones unchanged). */
  merge?(payloads: P[]): P[];
}

/** A group commit's writes go as one record up to this size (a record per write beyond it). */
export const MERGED_BYTES = 16 * 1024 * 1024;

/**
 * The writes of one group commit that may go (each checked against durable state and the
 * writes before it; a refused one leaves no trace for those after it), as one journal record:
 * one lsn, one encoding, their payloads merged. A group past MERGED_BYTES, or with a write that
 * cannot be encoded, goes as before: a record per write (lsns without gaps), an unencodable
 * write refused alone. Refused writes are rejected here; undefined when none may go.
 */
export function admitGroup<P>(items: Pending<P>[], lsn: number, hooks: GroupHooks<P>, encode: (lsn: number, ops: P[]) => Buffer): Admitted<P> | undefined {
  const pass = (encodeEach: boolean) => {
    const batch = new Scratch();
    const accepted: Pending<P>[] = [];
    const refused: [Pending<P>, unknown][] = [];
    const records: Buffer[] = [];
    for (const item of items) {
      // A refused item must leave no trace for the items after it: what it set is undone.
      batch.begin();
      try {
        for (const p of item.payloads) hooks.check?.(p, batch);
        if (encodeEach) records.push(encode(lsn + records.length, item.payloads));
        accepted.push(item);
      } catch (err) {
        batch.rollback();
        refused.push([item, err]);
      }
    }
    return { accepted, refused, records };
  };
  const merged = (accepted: Pending<P>[]): Admitted<P> | undefined => {
    if (accepted.length === 0) return undefined;
    const all = accepted.length === 1 ? accepted[0].payloads : accepted.flatMap((i) => i.payloads);
    const ops = accepted.length > 1 && hooks.merge ? hooks.merge(all) : all;
    const record = encode(lsn, ops);
    return record.length <= MERGED_BYTES || accepted.length === 1 ? { accepted, ops, record, records: 1 } : undefined;
  };
  let admitted = pass(false);
  let out: Admitted<P> | undefined;
  try {
    out = merged(admitted.accepted);
  } catch {
    // one write cannot be encoded: found below, write by write
  }
  if (!out && admitted.accepted.length > 0) {
    admitted = pass(true); // refusals are settled only now: a write refused here is no trace for the next
    const { accepted, records } = admitted;
    if (accepted.length > 0) out = { accepted, ops: accepted.flatMap((i) => i.payloads), record: Buffer.concat(records), records: records.length };
  }
  for (const [item, err] of admitted.refused) item.reject(err);
  return out;
}

/**
 * The group's scratch as its checks see it, with what the current item set logged so a refusal
 * can undo it: a copy of the whole scratch per item was quadratic in a fan-out's group (64
 * children's creations, each checked against a copy of the 63 before it).
 */
class Scratch extends Map<string, unknown> {
  private undo: [key: string, had: boolean, was: unknown][] = [];

  /** A new item's checks start: its changes are the ones `rollback` undoes. */
  begin(): void {
    this.undo = [];
  }

  override set(key: string, value: unknown): this {
    this.undo.push([key, super.has(key), super.get(key)]);
    return super.set(key, value);
  }

  override delete(key: string): boolean {
    this.undo.push([key, super.has(key), super.get(key)]);
    return super.delete(key);
  }

  /** Undo the current item's changes, last first. */
  rollback(): void {
    for (let i = this.undo.length - 1; i >= 0; i--) {
      const [key, had, was] = this.undo[i];
      if (had) super.set(key, was);
      else super.delete(key);
    }
    this.undo = [];
  }
}
