import * as assert from 'node:assert/strict';
import { copyData } from '../../../src/core/session/copy';

// copyData is how the log takes and hands out events (decision 0065): what structuredClone
// would give, made by hand for the plain data events are.
describe('copyData: a deep copy of event data', () => {
  it('copies nested objects and arrays: nothing mutable is shared, strings and numbers are equal', () => {
    const v = { type: 'assistant/message', text: 'x'.repeat(10_000), toolCalls: [{ id: 'c1', name: 'n', arguments: '{}' }], usage: { promptTokens: 3 } };
    const c = copyData(v);
    assert.deepEqual(c, v);
    assert.notEqual(c, v);
    assert.notEqual(c.toolCalls, v.toolCalls);
    assert.notEqual(c.toolCalls[0], v.toolCalls[0]);
    assert.notEqual(c.usage, v.usage);
    c.toolCalls.push({ id: 'c2', name: 'm', arguments: '' });
    c.toolCalls[0].name = 'changed';
    c.usage.promptTokens = 99;
    assert.deepEqual(v.toolCalls, [{ id: 'c1', name: 'n', arguments: '{}' }]);
    assert.equal(v.usage.promptTokens, 3);
  });

  it('keeps key order, undefined values and null', () => {
    const v = { b: 1, a: undefined, c: null, d: [undefined, null] };
    const c = copyData(v);
    assert.deepEqual(Object.keys(c), ['b', 'a', 'c', 'd']);
    assert.ok('a' in c);
    assert.deepEqual(c, structuredClone(v));
  });

  it('an own "__proto__" key (as JSON.parse makes one) stays an own key, never the prototype', () => {
    const v = JSON.parse('{"__proto__": {"polluted": true}, "x": 1}') as Record<string, unknown>;
    const c = copyData(v);
    assert.equal(Object.getPrototypeOf(c), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(c, '__proto__')?.value, { polluted: true });
    assert.equal((c as { polluted?: unknown }).polluted, undefined);
    assert.deepEqual(Object.keys(c), ['__proto__', 'x']);
  });

  it('copies only own keys: symbol keys are dropped (as structuredClone drops them), an enumerable key on Object.prototype is not copied', () => {
    const tag = Symbol('tag');
    const withSymbol = { a: { n: 1 }, [tag]: { secret: true } };
    const c = copyData(withSymbol);
    assert.deepEqual(Object.getOwnPropertySymbols(c), []);
    assert.deepEqual(c, structuredClone(withSymbol));
    assert.notEqual(c.a, withSymbol.a);
    const proto = Object.prototype as Record<string, unknown>;
    proto.polluted = { x: 1 };
    try {
      const d = copyData({ a: { n: 1 }, b: 2 });
      assert.deepEqual(Object.keys(d), ['a', 'b']);
      assert.equal(Object.hasOwn(d, 'polluted'), false);
    } finally {
      delete proto.polluted;
    }
  });

  it('an object without a prototype is copied as a plain object, as structuredClone does', () => {
    const v = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1, b: { c: [2] } });
    const c = copyData(v);
    assert.equal(Object.getPrototypeOf(c), Object.prototype);
    assert.deepEqual(c, structuredClone(v));
    assert.notEqual(c.b, v.b);
  });

  it('anything but plain data is what structuredClone makes of it; a function throws as it does', () => {
    const when = new Date('2026-01-01T00:00:00.000Z');
    class Thing {
      constructor(readonly n: number) {}
    }
    const v = { when, map: new Map([['k', 1]]), thing: new Thing(2), bytes: new Uint8Array([1, 2]) };
    const c = copyData(v);
    assert.deepEqual(c, structuredClone(v));
    assert.ok(c.when instanceof Date && c.when !== when);
    assert.equal(Object.getPrototypeOf(c.thing), Object.prototype); // as structuredClone: a plain object
    assert.throws(
      () => copyData({ f: () => 1 }),
      (err: Error) => err.name === 'DataCloneError',
    );
  });

  it('a cycle is copied as structuredClone copies it, not followed forever', () => {
    const v: Record<string, unknown> = { name: 'loop' };
    v.self = v;
    const c = copyData(v) as Record<string, unknown>;
    let node = c;
    for (let i = 0; i < 200; i++) node = node.self as Record<string, unknown>;
    assert.equal(node.name, 'loop');
    assert.notEqual(c, v);
  });
});
