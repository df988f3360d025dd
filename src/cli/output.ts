import type { Harness } from '../core/harness';
import type { SessionEvent } from '../core/session/events';
import type { ParsedArgs } from './args';

export interface Io {
  out(line: string): void;
  err(line: string): void;
  env: NodeJS.ProcessEnv;
}

export type Command = (args: ParsedArgs, io: Io) => Promise<number>;

/**
 * Characters a terminal acts on instead of showing: C0 controls but newline and tab (ESC
 * starts the sequences that move the cursor, recolour, retitle the window or write the
 * clipboard; CR overwrites a line), DEL, C1 controls (U+009B is a one-character CSI), the
 * line and paragraph separators, and the bidi marks, embeddings, overrides and isolates that
 * reorder what a line seems to say.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const UNPRINTABLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * One line for the terminal, shown as it is: every character in UNPRINTABLE is written as its
 * JSON escape (`\u001b`), so a session title or a program's output never drives the terminal,
 * and a JSON line (which never holds C0 raw) stays the same JSON value.
 */
export function printable(line: string): string {
  return line.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Every line the CLI writes goes through `printable` (remote programs and their titles reach the terminal). */
export function terminalIo(io: Io): Io {
  return { out: (line) => io.out(printable(line)), err: (line) => io.err(printable(line)), env: io.env };
}

/** `--json`: every event as one JSON line tagged with its session; otherwise readable progress. */
export function wireOutput(h: Harness, id: string, args: ParsedArgs, io: Io): void {
  const json = args.options.has('json');
  h.observe((c) => {
    if (c.type !== 'event') return;
    if (json) io.out(JSON.stringify({ session: c.sessionId, ...c.event }));
    else describeEvent(c.sessionId === id, c.event, io);
  });
}

function describeEvent(own: boolean, e: SessionEvent, io: Io): void {
  const tag = own ? '' : '  ';
  if (e.type === 'assistant/message') {
    if (e.text) io.out(`${tag}${e.text}`);
    for (const c of e.toolCalls ?? []) io.err(`${tag}→ ${c.name} ${c.arguments.length > 200 ? `${c.arguments.slice(0, 200)}…` : c.arguments}`);
  } else if (e.type === 'tool/result' && e.isError) io.err(`${tag}✗ ${e.name}: ${e.content.split('\n')[0]}`);
  else if (e.type === 'turn/end' && e.stopReason !== 'completed') io.err(`${tag}turn ended: ${e.stopReason}${e.error ? ` — ${e.error}` : ''}`);
  else if (e.type === 'workflow/phase' || e.type === 'workflow/end')
    io.err(
      `${tag}workflow ${e.runId}: ${e.type === 'workflow/phase' ? String(e.data?.title) : `${String(e.data?.status)}${e.data?.code ? ` (${String(e.data.code)})` : ''}`}`,
    );
}
