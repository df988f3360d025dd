import type * as acp from '@agentclientprotocol/sdk/unstable';
import { cutBytes, cutOf, REMOTE_BOUNDS } from '../subagent/remote-bounds';
import type { ChunkBuffer } from './acp-chunks';
import { record, str } from './run';
import type { RemoteSink } from './types';

/** One tool call the agent announced, merged from every update until the one with its final status. */
interface OpenCall {
  kind: string;
  title: string;
  input: Record<string, unknown>;
  /** Written to the log as a call (it waits for its input, which agents send in later updates). */
  written: boolean;
  content: acp.ToolCallContent[];
  rawOutput: unknown;
  /** A terminal's output streamed in `_meta` (codex-acp's `terminal_output_delta`), and its exit code. */
  output: string;
  exit?: number;
  /** Bytes of input merged so far (at most REMOTE_BOUNDS.itemBytes are kept). */
  inputBytes: number;
}

/** Where a merge reports what it dropped (decision 0044). */
type Cut = (what: string, bytes: number) => void;

/** The result a call is closed with when too many are open at once. */
export const EVICTED = `Arbor closed this call here: the agent had more than ${REMOTE_BOUNDS.openCalls} calls open at once (decision 0044).`;

type CallFields = Pick<acp.ToolCallUpdate, 'title' | 'kind' | 'rawInput' | 'content' | 'rawOutput' | '_meta'>;

/** The text of a content block (text as is; anything else named, never dropped silently). */
export function blockText(c: acp.ContentBlock | undefined): string {
  if (!c) return '';
  if (c.type === 'text') return c.text;
  if (c.type === 'resource_link') return `[${c.name}](${c.uri})`;
  if (c.type === 'resource') return 'text' in c.resource ? c.resource.text : `[resource ${c.resource.uri}]`;
  return `[${c.type}]`;
}

/**
 * A finished call's result: its content blocks, then a terminal's output (streamed deltas or
 * `_meta.terminal_output`) and exit code, else `rawOutput`.
 */
export function resultText(c: Pick<OpenCall, 'content' | 'rawOutput' | 'output' | 'exit'>): string {
  const parts: string[] = [];
  for (const b of c.content) {
    if (b.type === 'content') parts.push(blockText(b.content));
    else if (b.type === 'diff') parts.push(`diff ${b.path}`);
    else if (b.type === 'terminal') parts.push(`terminal ${b.terminalId}`);
  }
  if (c.output) parts.push(c.output.replace(/\n$/, ''));
  if (c.exit !== undefined) parts.push(`(exit code ${c.exit})`);
  if (!parts.some(Boolean) && c.rawOutput !== undefined && c.rawOutput !== null)
    parts.push(typeof c.rawOutput === 'string' ? c.rawOutput : JSON.stringify(c.rawOutput));
  return parts.filter(Boolean).join('\n');
}

/**
 * The agent's tool calls on their way into the log (decision 0040). ACP sends a call first and
 * fills it in later: Claude's adapter announces `{}` as the input and sends the command in
 * status-less updates; Codex's streams a command's output and exit code in `_meta`. So a call
 * is merged from every update and written when it finishes — or earlier, when something must
 * follow it in the log (a message chunk, another call, a permission question about it).
 * What an open call holds is bounded (decision 0044): at most REMOTE_BOUNDS.openCalls are open
 * at once (a new one closes the oldest), and each keeps at most REMOTE_BOUNDS.itemBytes of
 * input, content, raw output and streamed output.
 */
export class ToolCalls {
  private readonly open = new Map<string, OpenCall>();

  constructor(
    private readonly sink: RemoteSink,
    private readonly buf: ChunkBuffer,
  ) {}

  private readonly cut: Cut = (what, bytes) => this.sink.cut(what, bytes);

  async start(u: acp.ToolCall): Promise<void> {
    await this.writeAll();
    const id = callKey(u.toolCallId);
    if (!this.open.has(id) && this.open.size >= REMOTE_BOUNDS.openCalls) {
      const oldest = this.open.keys().next().value as string;
      await this.write(oldest);
      this.open.delete(oldest);
      await this.sink.toolResult(oldest, EVICTED, true);
    }
    const title = typeof u.title === 'string' ? cutOf(u.title, TITLE_CHARS) : '';
    const c: OpenCall = { kind: u.kind ?? 'other', title, input: {}, written: false, content: [], rawOutput: undefined, output: '', inputBytes: 0 };
    this.open.set(id, c);
    merge(c, u, this.cut);
    if (u.status === 'completed' || u.status === 'failed') await this.finish(id, c, u.status === 'failed');
  }

  async update(u: acp.ToolCallUpdate): Promise<void> {
    const id = callKey(u.toolCallId);
    const c = this.open.get(id);
    const done = u.status === 'completed' || u.status === 'failed';
    if (!c) {
      // Never announced (or already finished): the sink drops and counts a result for it.
      if (done) await this.sink.toolResult(id, '', u.status === 'failed');
      else this.sink.skipped('update-for-unknown-call');
      return;
    }
    merge(c, u, this.cut);
    if (done) await this.finish(id, c, u.status === 'failed');
  }

  /** Write every announced call not yet in the log (text or another call comes after it). */
  async writeAll(): Promise<void> {
    for (const id of this.open.keys()) await this.write(id);
  }

  /** A permission question about a call: what it says of the call (often its whole input) is merged, and the call goes in the log first. */
  async asked(u: acp.ToolCallUpdate): Promise<void> {
    const c = this.open.get(callKey(u.toolCallId));
    // Asked about a call it never announced: it is announced here, so its refusal has a place in the log.
    if (!c) await this.start({ ...u, title: u.title ?? u.kind ?? 'a tool call', status: 'pending' } as acp.ToolCall);
    else merge(c, u, this.cut);
    await this.write(callKey(u.toolCallId));
  }

  /** The kind the agent announced an open call with (a question about it may leave its kind out). */
  kindOf(id: string): string | undefined {
    return this.open.get(callKey(id))?.kind;
  }

  /** Put this call in the log now. */
  async write(id: string): Promise<void> {
    const c = this.open.get(id);
    if (!c || c.written) return;
    c.written = true;
    this.buf.flush();
    await this.sink.toolCall(id, c.kind, { title: c.title, ...c.input });
  }

  private async finish(id: string, c: OpenCall, failed: boolean): Promise<void> {
    await this.write(id);
    this.open.delete(id);
    await this.sink.toolResult(id, resultText(c), failed);
  }
}

/** A call's title is a label: this long at most. */
const TITLE_CHARS = 500;

/**
 * A call's id as kept while it is open: a name, cut as the sink cuts it in the log (an agent's
 * ids of megabytes would otherwise be held by every open call, decision 0044).
 */
const callKey = (id: string): string => cutOf(id, REMOTE_BOUNDS.idChars);

/** Bytes of a value as JSON (what it costs to keep). */
const jsonBytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v) ?? '');

function merge(c: OpenCall, u: CallFields, cut: Cut): void {
  const max = REMOTE_BOUNDS.itemBytes;
  if (typeof u.title === 'string' && u.title) c.title = cutOf(u.title, TITLE_CHARS);
  if (typeof u.kind === 'string') c.kind = cutOf(u.kind, TITLE_CHARS);
  if (u.rawInput !== undefined && u.rawInput !== null) {
    const bytes = jsonBytes(u.rawInput);
    if (c.inputBytes + bytes > max) cut('tool call arguments', bytes);
    else {
      c.inputBytes += bytes;
      if (record(u.rawInput)) Object.assign(c.input, u.rawInput);
      else c.input.input = u.rawInput;
    }
  }
  if (Array.isArray(u.content)) {
    // ACP: an update's content replaces the collection. Too big, it is kept as its text, cut.
    const bytes = jsonBytes(u.content);
    if (bytes <= max) c.content = u.content;
    else {
      const text = cutBytes(resultText({ content: u.content, rawOutput: undefined, output: '' }), max);
      cut('tool results', bytes - Buffer.byteLength(text));
      c.content = [{ type: 'content', content: { type: 'text', text } }];
    }
  }
  if (u.rawOutput !== undefined) {
    const bytes = jsonBytes(u.rawOutput);
    if (bytes <= max) c.rawOutput = u.rawOutput;
    else {
      c.rawOutput = cutBytes(typeof u.rawOutput === 'string' ? u.rawOutput : JSON.stringify(u.rawOutput), max);
      cut('tool results', bytes - max);
    }
  }
  const meta = record(u._meta) ? u._meta : {};
  const delta = record(meta.terminal_output_delta) ? str(meta.terminal_output_delta.data) : '';
  if (delta) c.output = keepOutput(c.output, delta, cut);
  const whole = record(meta.terminal_output) ? str(meta.terminal_output.data) : str(meta.terminal_output);
  if (whole) c.output = keepOutput('', whole, cut);
  const exit = record(meta.terminal_exit) ? meta.terminal_exit.exit_code : undefined;
  if (typeof exit === 'number') c.exit = exit;
}

/** A terminal's output so far plus more of it, at most REMOTE_BOUNDS.itemBytes (the rest is cut). */
function keepOutput(sofar: string, more: string, cut: Cut): string {
  const room = REMOTE_BOUNDS.itemBytes - Buffer.byteLength(sofar);
  const bytes = Buffer.byteLength(more);
  if (bytes <= room) return sofar + more;
  const kept = cutBytes(more, room);
  cut('tool output', bytes - Buffer.byteLength(kept));
  return sofar + kept;
}
