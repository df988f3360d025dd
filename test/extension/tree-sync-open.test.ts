// The panel's first fold (decision 0092): `foldAll` loads every stored summary after the first
// snapshot has gone (one `setImmediate`). An event staged meanwhile (an I/O callback: a running
// agent's reply) reaches the tree before its durable append has folded it into the store's
// summary; loading that summary over the tree's fold must not drop it.
import assert from 'node:assert/strict';
import { PriceBook } from '../../src/core/cost/prices';
import type { Change, Harness } from '../../src/core/harness';
import { AT_REST } from '../../src/core/live/state';
import type { SessionEvent } from '../../src/core/session/events';
import { summarize } from '../../src/core/session/summary';
import { TreeSync } from '../../src/extension/tree-sync';
import { ev, raw, sessionWith } from '../core/session/fixtures';

describe('extension: the tree at open, with events staged before the first fold', () => {
  it('an event staged while the summaries wait for the first snapshot is still in the node once they are loaded', async () => {
    const s = sessionWith([ev.turnStart('t'), ev.user('hi')]);
    s.append(raw({ ...ev.assistant('hello'), usage: { promptTokens: 50, completionTokens: 7 } }));
    const header = s.header;
    // The store's summary: the durable events; the reply is staged, its append under way.
    const stored = summarize(header, s.events.slice(0, 2));
    const reply = s.events[2] as SessionEvent;
    let observer: ((c: Change) => void) | undefined;
    const h = {
      cost: { prices: new PriceBook() },
      store: { list: () => [header], listRefs: () => [header], summaryRef: () => stored, summary: async () => stored, header: () => header },
      observe: (fn: (c: Change) => void) => {
        observer = fn;
        return () => undefined;
      },
      resident: () => undefined,
      liveOf: () => AT_REST,
    } as unknown as Harness;
    const sync = new TreeSync({
      harness: () => h,
      views: { broadcast: () => undefined } as never,
      feed: { event: () => undefined, delta: () => undefined, queue: async () => undefined } as never,
      runFeed: { event: () => undefined } as never,
      desk: { mark: (n: unknown) => n, marked: () => [] } as never,
      log: () => undefined,
    });
    // An I/O callback of this turn of the loop: it runs before `foldAll`'s setImmediate.
    setImmediate(() => observer?.({ type: 'event', sessionId: header.id, event: reply }));
    await sync.follow(h);
    await new Promise((r) => setImmediate(r)); // (and that callback has run, whichever came first)
    assert.equal(sync.tree.node(header.id)?.tokens.prompt, 50, 'the staged reply is in the node');
    assert.equal(sync.tree.node(header.id)?.tokens.completion, 7);
  });
});
