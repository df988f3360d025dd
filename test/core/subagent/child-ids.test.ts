import assert from 'node:assert/strict';
import { ChildIds } from '../../../src/core/subagent/child-ids';

// Six hex digits collide in a large workflow (24 bits): an id taken by a stored session or by a
// creation under way is drawn again; one whose creation settled is the store's to answer for.
describe('subagent: child ids are never one already taken', () => {
  /** Draws from a fixed sequence, as a random source that repeats itself would. */
  const sequence = (...xs: string[]) => {
    let i = 0;
    return () => `${xs[i++ % xs.length]}-0000-4000-8000-000000000000`;
  };

  it('draws again while the id is stored or being created, and keeps the lineage and six hex digits', () => {
    const stored = new Set(['root.aaaaaa']);
    const ids = new ChildIds((id) => stored.has(id), sequence('aaaaaa', 'bbbbbb', 'bbbbbb', 'cccccc'));
    assert.equal(ids.draw('root'), 'root.bbbbbb', 'a stored id is skipped');
    assert.equal(ids.draw('root'), 'root.cccccc', 'an id under creation is skipped');
  });

  it('after a creation settles, the store decides: a published id stays taken, a failed one is free again', () => {
    const stored = new Set<string>();
    const ids = new ChildIds((id) => stored.has(id), sequence('dddddd'));
    const first = ids.draw('root');
    stored.add(first); // published
    ids.settled(first);
    const other = new ChildIds((id) => stored.has(id), sequence('dddddd', 'eeeeee'));
    assert.equal(other.draw('root'), 'root.eeeeee');
    stored.delete(first); // as if its creation had failed: nothing holds it
    assert.equal(ids.draw('root'), 'root.dddddd');
  });

  it('a random source that repeats a taken id gives up with DUPLICATE_SESSION instead of drawing forever', () => {
    const ids = new ChildIds((id) => id === 'root.ffffff', sequence('ffffff'));
    assert.throws(
      () => ids.draw('root'),
      (e: Error & { code?: string }) => e.code === 'DUPLICATE_SESSION' && /random source repeats itself/.test(e.message),
    );
  });
});
