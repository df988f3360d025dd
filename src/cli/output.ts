import type { Harness } from '../core/harness';
import type { SessionEvent } from '../core/session/events';
import type { ParsedArgs } from './args';

export interface Io {
  out(line: string): void;
  err(line: string): void;
  env: NodeJS.ProcessEnv;
}

export type Command = (args: ParsedArgs, io: Io) => Promise<number>;

/** `--json`: every event as one JSON line tagged with its session; otherwise readable progress. */
export function wireOutput(h: Harness, id: string, args: ParsedArgs, io: Io): void {
  if (args.options.has('json')) {
    h.onEvent((session, e) => io.out(JSON.stringify({ session, ...e })));
    return;
  }
  h.onEvent((session, e) => describeEvent(session === id, e, io));
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
