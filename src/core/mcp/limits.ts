import type { Tool as McpToolDef } from '@modelcontextprotocol/sdk/types.js';
import { schemaProblem } from './schema-check';

// What one server may put in front of the model (decision 0055): every request carries every
// offered tool's definition, so a server that lists thousands of tools, or one schema of
// megabytes, would make every turn of every conversation slow and costly (and past a provider's
// own limit: OpenAI's chat completions take at most 128 tools). A listing is cut to these
// bounds in the server's own order, and what was left out is said in the server's state.

/** Tools offered from one server, at most (the rest are left out, named by count). */
export const MAX_TOOLS_PER_SERVER = 128;
/** One tool's definition (name, description, input schema) as JSON, at most. */
export const MAX_TOOL_BYTES = 32 * 1024;
/** All of one server's offered definitions together, at most. */
export const MAX_SERVER_BYTES = 256 * 1024;
/** Tools read from a listing at all: past this, the pages are not asked for. */
export const MAX_LISTED = 4 * MAX_TOOLS_PER_SERVER;
/** What Arbor sent a server that it has not read yet, at most (bytes, messages): past it the connection is ended. */
export const MAX_UNSENT_BYTES = 16 * 1024 * 1024;
export const MAX_UNSENT_MESSAGES = 4096;
/** Levels of objects and arrays one tool's definition may nest. */
export const MAX_DEFINITION_DEPTH = 64;
/** Bytes of definitions read from a listing at all, past which no more pages are asked for (one page is bounded by `MAX_MESSAGE_BYTES`). */
export const MAX_LISTED_BYTES = 16 * 1024 * 1024;

/**
 * One message from a server, at most: past it the connection is ended (its call answers that the
 * server sent a message over this), never read on into memory. The SDK's own stdio bound, held
 * for streamable HTTP too, where a JSON body or one server-sent event had none.
 */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/**
 * A configured value this long in a tool's name keeps the tool out. Shorter ones (`info`,
 * `true`, `read` — a log level, a flag, a mode) are redacted in text like any value, but would
 * take `read_file` away from a server run with `MODE=read`; a token is longer.
 */
const NAME_SECRET_MIN = 8;

const kb = (n: number) => `${Math.ceil(n / 1024)} KB`;

/**
 * The tools of a listing that fit the bounds, in its order, and a line for each kind of tool left
 * out. Left out too: a tool whose input schema Arbor's argument check cannot read
 * (`schema-check.ts`), and one whose name holds a value of the server's configuration (an env or
 * header value): the name is the one part of a definition that cannot be redacted, as the call
 * needs it, and it reaches every model request and the log.
 */
export function offerable(defs: readonly McpToolDef[], secrets: readonly string[] = []): { offered: McpToolDef[]; leftOut: string[] } {
  const offered: McpToolDef[] = [];
  const leftOut: string[] = [];
  const seen = new Set<string>();
  let bytes = 0;
  let overCount = 0;
  let overTotal = 0;
  const big: string[] = [];
  for (const d of defs) {
    if (typeof d?.name !== 'string' || d.name === '' || seen.has(d.name)) continue;
    seen.add(d.name);
    const size = Buffer.byteLength(JSON.stringify(d));
    if (size > MAX_TOOL_BYTES) {
      big.push(`"${clip(d.name, 60)}" (${kb(size)})`);
      continue;
    }
    if (secrets.some((x) => x.length >= NAME_SECRET_MIN && d.name.includes(x))) {
      leftOut.push(`a tool is not offered: its name holds a value of the server's configuration (env or headers)`);
      continue;
    }
    const bad = schemaProblem(d.inputSchema);
    if (bad) {
      leftOut.push(`tool "${clip(d.name, 60)}" is not offered: its input schema is not one Arbor can check (${clip(bad, 120)})`);
      continue;
    }
    if (offered.length >= MAX_TOOLS_PER_SERVER) {
      overCount++;
      continue;
    }
    if (bytes + size > MAX_SERVER_BYTES) {
      overTotal++;
      continue;
    }
    bytes += size;
    offered.push(d);
  }
  if (big.length > 0)
    leftOut.push(
      `${big.length === 1 ? 'tool' : 'tools'} ${big.slice(0, 5).join(', ')}${big.length > 5 ? ` and ${big.length - 5} more` : ''} not offered: a definition may take at most ${kb(MAX_TOOL_BYTES)}`,
    );
  if (overCount > 0) leftOut.push(`${overCount} more tools are not offered: at most ${MAX_TOOLS_PER_SERVER} tools of one server are`);
  if (overTotal > 0) leftOut.push(`${overTotal} tools are not offered: the server's tool definitions together may take at most ${kb(MAX_SERVER_BYTES)}`);
  return { offered, leftOut };
}

/** Text cut to `max` characters, with an ellipsis when it was longer. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
