import { randomUUID } from 'node:crypto';
import { StoreError } from '../store/errors';

/** Draws before giving up: 64 taken ids in a row means the random source repeats itself. */
const MAX_DRAWS = 64;

/**
 * Child ids carry their lineage (`root.a1b2c3.d4e5f6`) and stay file-name safe and short: six
 * hex digits, 24 bits, so a 1,000-child workflow drew a taken one a few times in a hundred runs
 * (DUPLICATE_SESSION, seen in the workflow bench). An id is drawn again while it is taken by a
 * stored session or by a creation under way in this process; the store has one writer, so no
 * other process adds ids meanwhile.
 */
export class ChildIds {
  /** Drawn and not yet published (or failed before its publish: never drawn again). */
  private readonly drawn = new Set<string>();

  constructor(
    private readonly stored: (id: string) => boolean,
    private readonly random: () => string = () => randomUUID(),
  ) {}

  draw(parentId: string): string {
    for (let i = 0; i < MAX_DRAWS; i++) {
      const id = `${parentId}.${this.random().slice(0, 6)}`;
      if (this.drawn.has(id) || this.stored(id)) continue;
      this.drawn.add(id);
      return id;
    }
    throw new StoreError(
      'DUPLICATE_SESSION',
      `Every id drawn for a child of ${parentId} (${MAX_DRAWS} tries) is taken: the random source repeats itself. Nothing was created; retry.`,
    );
  }

  /** The creation's publish ended (the catalog has the id, or never will): the store answers for it now. */
  settled(id: string): void {
    this.drawn.delete(id);
  }
}
