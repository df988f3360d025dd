/**
 * What the store's durable writes have cost since it was opened (decision 0063): tests prove
 * group commit with it (a plain turn, a fan-out), the bench prints it beside the figures it
 * explains. Plain counters, shared by the catalog and every tree file of one store.
 */
export interface StoreStats {
  /** fsync/fdatasync calls on the store's files: journal commits, resets, checkpoints, the folder. */
  syncs: number;
  /** Journal appends, each written and covered by one fdatasync (a group commit). */
  commits: number;
  /** Writes of the catalog or a tree file those commits held (a commit's writes go as one journal record: decision 0088). */
  records: number;
  /** Session events made durable (appended, or published with their session). */
  events: number;
  /** Wall time the commits spent from their write to their fdatasync's answer (ms, summed): what a caller acknowledged after them waited on the disk. */
  commitMs: number;
}

export class StoreCounters implements StoreStats {
  syncs = 0;
  commits = 0;
  records = 0;
  events = 0;
  commitMs = 0;

  snapshot(): StoreStats {
    return { syncs: this.syncs, commits: this.commits, records: this.records, events: this.events, commitMs: this.commitMs };
  }
}
