import assert from 'node:assert/strict';
import { type Change, ChangeStream } from '../../../src/core/live/changes';

// The one change stream (decision 0054): every observer hears every change once, in one order.
// Who hears a change is fixed when its delivery begins (the observers are taken once per
// subscription, not copied per change: decision 0117).
describe('live: the change stream', () => {
  const live = (sessionId: string): Change => ({ type: 'live', sessionId, what: 'idle' });
  const ids = (cs: readonly Change[]) => cs.map((c) => (c.type === 'mcp' ? 'mcp' : c.sessionId));

  it('tells a change emitted by an observer to every observer after the one being delivered', () => {
    const s = new ChangeStream();
    const first: Change[] = [];
    const second: Change[] = [];
    s.observe((c) => {
      first.push(c);
      if (c.type === 'live' && c.sessionId === 'a') s.emit(live('b'));
    });
    s.observe((c) => second.push(c));
    s.emit(live('a'));
    assert.deepEqual(ids(first), ['a', 'b']);
    assert.deepEqual(ids(second), ['a', 'b']);
    // One object per change, the same for every observer.
    assert.equal(first[0], second[0]);
  });

  it('an observer added during a delivery hears the next change, not that one', () => {
    const s = new ChangeStream();
    const late: Change[] = [];
    let added = false;
    s.observe(() => {
      if (added) return;
      added = true;
      s.observe((c) => late.push(c));
    });
    s.emit(live('a'));
    assert.deepEqual(late, []);
    s.emit(live('b'));
    assert.deepEqual(ids(late), ['b']);
  });

  it('an observer removed during a delivery still hears that change, and none after', () => {
    const s = new ChangeStream();
    const heard: Change[] = [];
    let off: () => void = () => undefined;
    s.observe(() => off());
    off = s.observe((c) => heard.push(c));
    s.emit(live('a'));
    s.emit(live('b'));
    assert.deepEqual(ids(heard), ['a']);
  });

  it('unsubscribing twice or subscribing again keeps every observer heard once', () => {
    const s = new ChangeStream();
    const heard: string[] = [];
    const fn = (c: Change) => heard.push(c.type === 'mcp' ? 'mcp' : c.sessionId);
    const off = s.observe(fn);
    s.emit(live('a'));
    off();
    off();
    assert.equal(s.observed, false);
    s.emit(live('b'));
    const off2 = s.observe(fn);
    s.observe(fn); // the same observer twice is one observer
    s.emit(live('c'));
    off2();
    s.emit(live('d'));
    assert.deepEqual(heard, ['a', 'c']);
  });

  it("an observer's throw reaches neither the emitter nor the other observers", () => {
    const s = new ChangeStream();
    const heard: Change[] = [];
    s.observe(() => {
      throw new Error('a view failed');
    });
    s.observe((c) => heard.push(c));
    s.emit(live('a'));
    s.emit({ type: 'mcp' });
    assert.deepEqual(ids(heard), ['a', 'mcp']);
  });
});
