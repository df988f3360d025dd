// The blobs a recording in this process has handed out and not yet put in a durable log
// (decision 0059, amended s57): a deletion's sweep (`forget.ts`) never removes one. Objects are
// content-addressed, so a turn of another session storing the same bytes as a deleted session's
// finds the object there and writes nothing: without a pin, the sweep could remove it between
// that check and the turn's record. A pin is taken on this thread before the object's existence
// is asked, and the sweep asks `has` on this thread just before each removal, so no interleaving
// of the two loses a blob. A pin lasts until a sweep starts after its recording (and every
// recording begun before it) has ended: by then the record is in its session's log, read next.

export class BlobPins {
  private gen = 0;
  /** Recordings under way: their start. */
  private readonly open = new Set<number>();
  /** Pinned blob and tree ids: the last hand-out's generation. */
  private readonly pins = new Map<string, number>();
  private readonly trees = new Map<string, number>();

  /** A recording begins (a step's calls, a rewind, a recovery); call the returned function once its record is durable (or it records nothing). */
  begin(): () => void {
    const start = ++this.gen;
    this.open.add(start);
    return () => void this.open.delete(start);
  }

  /** A blob id handed out (before its object is asked for or written). */
  pin(id: string): void {
    this.pins.set(id, ++this.gen);
  }

  /** How many trees were handed out so far (a sweep reads the pinned trees again when it moved). */
  treesHanded = 0;

  /** A snapshot's tree handed out: its blobs stay while it is pinned. */
  pinTree(id: string): void {
    this.trees.set(id, ++this.gen);
    this.treesHanded++;
  }

  has(id: string): boolean {
    return this.pins.has(id);
  }

  /** The trees pinned now. */
  pinnedTrees(): string[] {
    return [...this.trees.keys()];
  }

  /** At a sweep's start, before the logs are read: the pins of recordings that ended before every recording still open began go (their records are durable now). */
  settle(): void {
    let oldest = this.gen + 1;
    for (const s of this.open) oldest = Math.min(oldest, s);
    for (const m of [this.pins, this.trees]) for (const [id, g] of m) if (g < oldest) m.delete(id);
  }
}
