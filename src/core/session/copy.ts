/** Deeper than this, a value is handed to structuredClone (a cycle, or data no event has). */
const MAX_DEPTH = 64;

/**
 * A deep copy of event data: plain objects, arrays and primitives are copied by hand (strings
 * are immutable and shared, so a long tool result is not copied byte by byte); anything else —
 * a Date, a Map, a class instance, a cycle past MAX_DEPTH — goes to structuredClone, so the
 * result is exactly what structuredClone would give, a function still throws DataCloneError.
 */
export function copyData<T>(v: T): T {
  return copy(v, 0) as T;
}

function copy(v: unknown, depth: number): unknown {
  if (typeof v !== 'object' || v === null) return typeof v === 'function' || typeof v === 'symbol' ? structuredClone(v) : v;
  if (depth > MAX_DEPTH) return structuredClone(v);
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return structuredClone(v);
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = copy(v[i], depth + 1);
    return out;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return structuredClone(v);
  // Symbol keys are not data (structuredClone drops them): only then is the object copied key by key.
  if (Object.getOwnPropertySymbols(v).length > 0) return copyKeys(v, depth);
  // A spread copies the own enumerable string keys in order, as data (an own `__proto__` stays a key);
  // then only the values that are not primitives are replaced by their copies.
  const out: Record<string, unknown> = { ...v };
  for (const k in out) {
    const x = out[k];
    // The own check (an enumerable key on Object.prototype is not the copy's) only where a value is replaced.
    if (((typeof x === 'object' && x !== null) || typeof x === 'function' || typeof x === 'symbol') && Object.hasOwn(out, k)) out[k] = copy(x, depth + 1);
  }
  return out;
}

function copyKeys(v: object, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const x = copy((v as Record<string, unknown>)[k], depth + 1);
    // An own `__proto__` key (JSON.parse makes one) stays a key, never the copy's prototype.
    if (k === '__proto__') Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true });
    else out[k] = x;
  }
  return out;
}
