// A server's input schema is what Arbor's own argument check (`tools/args.ts`) reads before every
// call of the tool, and what every model request carries. The SDK checks only its top level;
// below it a server can say anything, and a schema whose `enum` is a number made the check throw:
// the call never became a tool result and the whole turn ended in an internal error. A tool is
// offered only when its schema has, at every level the check walks, the shapes the check reads.
// (How deep it nests is bounded before: `connection.ts` refuses a definition past 64 levels.)

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Where an input schema breaks the argument check (`q.enum must be a list`), or undefined when it does not. */
export function schemaProblem(schema: unknown): string | undefined {
  return walk(schema, '');
}

function walk(s: unknown, at: string): string | undefined {
  // `true` / `false` are schemas too (anything / nothing); the check reads no field of them.
  if (typeof s === 'boolean') return undefined;
  const here = (field: string) => (at ? `${at}.${field}` : field);
  if (!isRecord(s)) return `${at || 'the schema'} must be an object`;
  if (s.required !== undefined && (!Array.isArray(s.required) || s.required.some((r) => typeof r !== 'string')))
    return `${here('required')} must be a list of names`;
  if (s.enum !== undefined && !Array.isArray(s.enum)) return `${here('enum')} must be a list`;
  if (s.properties !== undefined) {
    if (!isRecord(s.properties)) return `${here('properties')} must be an object`;
    for (const [name, sub] of Object.entries(s.properties)) {
      const p = walk(sub, at ? `${at}.${name}` : name);
      if (p) return p;
    }
  }
  if (s.items !== undefined && !Array.isArray(s.items)) return walk(s.items, `${at || 'the schema'}[]`);
  return undefined;
}
