import { REMOTE_BOUNDS } from '../subagent/remote-bounds';
import { type ConfineSpec, namespaceMounts } from './namespace-mounts';
import { namespaceSpec } from './pid-namespace';
import { DEFAULT_IDLE_MS, type ProcessSpec, RemoteProcess, resolveCommand } from './process';
import type { RemoteOutcome, RemoteSink, RemoteTurnContext } from './types';

export type Json = Record<string, unknown>;

/** What a driver has read so far: the program's final word, and errors it reported on the way. */
export interface StreamState {
  final?: RemoteOutcome;
  errors: string[];
  /** The program's process: its group and the leader's start time (handlers record `identity`). */
  proc: Pick<RemoteProcess, 'pid' | 'identity'>;
}

/** A driver's reading of one JSON line; `type` picks the handler, unknown types are counted. */
export type LineHandlers = Record<string, (e: Json, st: StreamState, sink: RemoteSink) => void | Promise<void>>;

export interface ProgramRun {
  /** How messages name the program ("Codex", "Claude Code"). */
  label: string;
  /** The setting that names its command, for a missing-binary error. */
  setting: string;
  spec: ProcessSpec;
  handlers: LineHandlers;
  /** The field holding an event's type (default `type`). */
  typeOf?: (e: Json) => string | undefined;
  /** A confined child: what its namespace keeps from change (`namespace-mounts.ts`); absent: `/` as it is. */
  confine?: ConfineSpec;
}

export const record = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
export const str = (v: unknown): string => (typeof v === 'string' ? v : '');
export const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.round(v) : 0);

/**
 * `step` over the blocks of `content` (an array, else none) one after another: a step that
 * writes returns a promise, and the blocks after it wait for it. Synchronous (no promise)
 * when no step wrote, so a line that only buffers text costs none.
 */
export function inOrder(content: unknown, step: (b: unknown) => void | Promise<void>, from = 0): void | Promise<void> {
  if (!Array.isArray(content)) return;
  for (let i = from; i < content.length; i++) {
    const writing = step(content[i]);
    if (writing) return writing.then(() => inOrder(content, step, i + 1));
  }
}

/** How a program's process ended, in words: `killed by SIGTERM` or `exit code 3`. */
export const exitPhrase = (exit: { code: number | null; signal: NodeJS.Signals | null }): string =>
  exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`;

/** The end of what it wrote to stderr, for an error message (empty when it wrote nothing). */
export const stderrNote = (label: string, proc: Pick<RemoteProcess, 'stderrTail'>): string =>
  proc.stderrTail ? `\n${label} said (stderr): ${proc.stderrTail.slice(-2000)}` : '';

/** The program is not where its setting says: what to do about it. */
export const notFound = (label: string, command: string, fix: string): RemoteOutcome => ({
  stopReason: 'error',
  error: `REMOTE_NOT_FOUND: ${label} was not found: "${command}" is not an executable file or a command on PATH. Install it, or ${fix}.`,
});

/** An error the program reported on its way: only the last is kept, cut to REMOTE_BOUNDS.errorBytes (decision 0044). */
export function noteError(st: Pick<StreamState, 'errors'>, message: string): void {
  st.errors.splice(0, st.errors.length, message.length > REMOTE_BOUNDS.errorBytes ? `${message.slice(0, REMOTE_BOUNDS.errorBytes)}…` : message);
}

/** It said nothing for the idle timeout and was stopped. */
export const idledOut = (label: string, idleTimeoutMs: number | undefined, tail: string): RemoteOutcome => ({
  stopReason: 'error',
  error: `${label} produced no output for ${Math.round((idleTimeoutMs ?? DEFAULT_IDLE_MS) / 1000)} s and was stopped (idle timeout).${tail}`,
});

const typeField = (e: Json) => (typeof e.type === 'string' ? e.type : undefined);

/**
 * One line of a program's stream into sink calls: parsed, its handler picked by type. A
 * non-JSON line or an unknown type is counted, never fatal. (The bench's mapping figure runs
 * recorded lines through this same step.)
 */
export function mapLine(
  text: string,
  handlers: LineHandlers,
  st: StreamState,
  sink: RemoteSink,
  typeOf: (e: Json) => string | undefined = typeField,
): void | Promise<void> {
  let e: unknown;
  try {
    e = JSON.parse(text);
  } catch {
    return sink.skipped('non-json');
  }
  const type = record(e) ? (typeOf(e) ?? '') : '';
  // The program names the type: an own handler of the table, or unknown (`__proto__` is no handler).
  const handler = record(e) && Object.hasOwn(handlers, type) ? handlers[type] : undefined;
  if (!handler) return sink.skipped(record(e) ? `unknown:${String(typeOf(e))}` : 'non-object');
  // Most lines (a streamed delta) are mapped synchronously: only a handler that writes to the log returns a promise to wait for.
  return handler(e as Json, st, sink);
}

/**
 * Run a program for one turn and feed its JSON lines to the driver's handlers. Non-JSON
 * lines, over-long lines and unknown event types are counted, never fatal; the outcome is
 * the program's final event, else an error naming how it ended and its stderr tail.
 */
export async function runProgram(ctx: RemoteTurnContext, sink: RemoteSink, run: ProgramRun): Promise<RemoteOutcome> {
  const command = resolveCommand(run.spec.command, run.spec.env.PATH ?? process.env.PATH);
  if (!command) return notFound(run.label, run.spec.command, `set ${run.setting} to its path`);
  const ns = await namespaceSpec();
  // Only a namespace can carry the mounts: where bwrap cannot make one, the program's own sandbox is all there is (as before).
  const mounts = ns.bwrap && run.confine ? await namespaceMounts(run.confine) : undefined;
  if (ctx.signal.aborted) {
    await mounts?.release();
    return { stopReason: 'interrupted' };
  }
  const proc = new RemoteProcess({ ...run.spec, command, ...ns, ...(mounts ? { mounts } : {}) });
  const onAbort = () => void proc.stop();
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  const st: StreamState = { errors: [], proc };
  try {
    for await (const line of proc.lines()) {
      if ('tooLong' in line) sink.skipped('line-too-long');
      else {
        const writing = mapLine(line.text, run.handlers, st, sink, run.typeOf);
        if (writing) await writing;
      }
    }
    const exit = await proc.exited;
    await proc.reapGroup();
    if (ctx.signal.aborted) return { stopReason: 'interrupted' };
    const tail = stderrNote(run.label, proc);
    if (exit.spawnError) return { stopReason: 'error', error: `${run.label} could not start: ${exit.spawnError}` };
    if (proc.idledOut) return idledOut(run.label, run.spec.idleTimeoutMs, tail);
    if (st.final) return st.final.stopReason === 'error' && !st.final.error ? { ...st.final, error: `${run.label} failed.${tail}` } : st.final;
    const how = exitPhrase(exit);
    const said = st.errors.length ? ` Last error: ${st.errors[st.errors.length - 1]}` : '';
    return { stopReason: 'error', error: `${run.label} ended without finishing its turn (${how}).${said}${tail}` };
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
    if (proc.groupAlive()) await proc.stop();
  }
}
