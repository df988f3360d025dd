import { describeError } from '../errors';
import type { JsonSchema, Tool } from './tool';

export type ParsedArguments = { ok: true; args: Record<string, unknown> } | { ok: false; message: string };

/** At most this many problems are listed in one message; the rest would be noise. */
const MAX_PROBLEMS = 5;
const PREVIEW = 120;

/**
 * Parse a tool call's raw JSON arguments and check them against the tool's schema.
 * A failure is a message the model can act on: it names the field, what was expected
 * (with the field's description) and what was given, then restates the signature.
 */
export function parseToolArguments(tool: Pick<Tool, 'name' | 'parameters'>, rawJson: string): ParsedArguments {
  const text = typeof rawJson === 'string' ? rawJson : String(rawJson);
  let value: unknown;
  if (text.trim() === '') {
    // Some models send "" for a call without arguments; that means {}.
    value = {};
  } else {
    try {
      value = JSON.parse(text);
    } catch (err) {
      const why = describeError(err);
      return fail(tool, [`the arguments are not valid JSON (${why}): ${preview(text)}`]);
    }
  }
  if (!isPlainObject(value)) {
    return fail(tool, [`the arguments must be a JSON object, got ${describeValue(value)}`]);
  }
  const problems: string[] = [];
  checkObject(tool.parameters, value, '', problems);
  if (problems.length) return fail(tool, problems);
  // Tools see an omitted optional argument the same way whether it was left out or sent as null.
  return { ok: true, args: ownCopy(value) };
}

function fail(tool: Pick<Tool, 'name' | 'parameters'>, problems: string[]): ParsedArguments {
  const shown = problems.slice(0, MAX_PROBLEMS);
  const more = problems.length > shown.length ? `; and ${problems.length - shown.length} more` : '';
  const sig = signature(tool.parameters);
  return { ok: false, message: `${tool.name}: ${shown.join('; ')}${more}.${sig ? ` Expected arguments: ${sig}.` : ''}` };
}

// Lookups go through own properties only: JSON.parse makes `"__proto__"` an own key, and a
// plain `props[name]` would find Object.prototype for it (or a function for "constructor"),
// which reads as a schema without a type, so the key (and whatever it holds) passed unchecked.
function own<T>(obj: Record<string, T> | undefined, key: string): T | undefined {
  return obj && Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/**
 * The checked arguments as a fresh object of own data properties, nulls dropped. Defined,
 * never assigned: assigning `args["__proto__"] = v` would make `v` the prototype, and every
 * key of `v` would then read as an argument no check ever saw.
 */
function ownCopy(value: Record<string, unknown>): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v !== null) Object.defineProperty(args, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return args;
}

function checkObject(schema: JsonSchema, value: Record<string, unknown>, at: string, problems: string[]): void {
  const props = schema.properties ?? {};
  for (const name of schema.required ?? []) {
    const v = own(value, name);
    if (v === undefined || v === null) {
      problems.push(`${quote(join(at, name))} is required (${expected(own(props, name) ?? {})})`);
    }
  }
  for (const [name, v] of Object.entries(value)) {
    const sub = own(props, name);
    if (!sub) {
      if (schema.additionalProperties === false) {
        const known = Object.keys(props);
        problems.push(`${quote(join(at, name))} is not an argument of this tool${known.length ? ` (known: ${known.join(', ')})` : ' (it takes no arguments)'}`);
      }
      continue;
    }
    // An explicit null means "not given", as most models intend it (a required one is reported above).
    if (v === null) continue;
    checkValue(sub, v, join(at, name), problems);
  }
}

function checkValue(schema: JsonSchema, value: unknown, at: string, problems: string[]): void {
  const bad = (): void => {
    problems.push(`${quote(at)} must be ${expected(schema)}, got ${describeValue(value)}`);
  };
  switch (schema.type) {
    case 'string':
      if (typeof value !== 'string') return bad();
      break;
    case 'boolean':
      if (typeof value !== 'boolean') return bad();
      break;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return bad();
      break;
    case 'integer':
      if (typeof value !== 'number' || !Number.isInteger(value)) return bad();
      break;
    case 'array':
      if (!Array.isArray(value)) return bad();
      if (schema.items) for (const [i, item] of value.entries()) checkValue(schema.items, item, `${at}[${i}]`, problems);
      break;
    case 'object':
      if (!isPlainObject(value)) return bad();
      checkObject(schema, value, at, problems);
      break;
    case undefined:
      break;
  }
  if (schema.enum && !schema.enum.includes(value as string | number)) return bad();
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) return bad();
    if (schema.maximum !== undefined && value > schema.maximum) return bad();
  }
}

/** "a string: the file path", "an integer ≥ 1: first line", "one of "a", "b"". */
function expected(schema: JsonSchema): string {
  let what: string;
  if (schema.enum) {
    what = `one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`;
  } else {
    what = article(schema.type);
    if (schema.type === 'array' && schema.items?.type) what += ` of ${schema.items.type}s`;
    const lo = schema.minimum;
    const hi = schema.maximum;
    if (lo !== undefined && hi !== undefined) what += ` from ${lo} to ${hi}`;
    else if (lo !== undefined) what += ` ≥ ${lo}`;
    else if (hi !== undefined) what += ` ≤ ${hi}`;
  }
  return schema.description ? `${what}: ${schema.description}` : what;
}

function article(type: JsonSchema['type']): string {
  switch (type) {
    case 'integer':
      return 'an integer';
    case 'array':
      return 'an array';
    case 'object':
      return 'an object';
    case undefined:
      return 'a value';
    default:
      return `a ${type}`;
  }
}

/** The tool's signature in one line: `path (string, required), startLine (integer)`. */
function signature(schema: JsonSchema): string {
  const props = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  return Object.entries(props)
    .map(([name, s]) => `${name} (${s.enum ? s.enum.map((e) => JSON.stringify(e)).join('|') : (s.type ?? 'any')}${required.has(name) ? ', required' : ''})`)
    .join(', ');
}

export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array (${preview(JSON.stringify(value))})`;
  switch (typeof value) {
    case 'string':
      return `a string (${preview(JSON.stringify(value))})`;
    case 'number':
      return Number.isInteger(value) ? `the integer ${value}` : `the number ${value}`;
    case 'boolean':
      return `the boolean ${value}`;
    case 'object':
      return `an object (${preview(JSON.stringify(value))})`;
    default:
      return typeof value;
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function join(at: string, name: string): string {
  return at ? `${at}.${name}` : name;
}

function quote(at: string): string {
  return `'${at}'`;
}

function preview(s: string): string {
  return s.length > PREVIEW ? `${s.slice(0, PREVIEW)}…` : s;
}
