import type * as acp from '@agentclientprotocol/sdk/unstable';
import type { ChunkBuffer } from './acp-map';
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
}

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
 */
export class ToolCalls {
  private readonly open = new Map<string, OpenCall>();

  constructor(
    private readonly sink: RemoteSink,
    private readonly buf: ChunkBuffer,
  ) {}

  async start(u: acp.ToolCall): Promise<void> {
    await this.writeAll();
    const c: OpenCall = { kind: u.kind ?? 'other', title: u.title, input: {}, written: false, content: [], rawOutput: undefined, output: '' };
    this.open.set(u.toolCallId, c);
    merge(c, u);
    if (u.status === 'completed' || u.status === 'failed') await this.finish(u.toolCallId, c, u.status === 'failed');
  }

  async update(u: acp.ToolCallUpdate): Promise<void> {
    const c = this.open.get(u.toolCallId);
    const done = u.status === 'completed' || u.status === 'failed';
    if (!c) {
      // Never announced (or already finished): the sink drops and counts a result for it.
      if (done) await this.sink.toolResult(u.toolCallId, '', u.status === 'failed');
      else this.sink.skipped('update-for-unknown-call');
      return;
    }
    merge(c, u);
    if (done) await this.finish(u.toolCallId, c, u.status === 'failed');
  }

  /** Write every announced call not yet in the log (text or another call comes after it). */
  async writeAll(): Promise<void> {
    for (const id of this.open.keys()) await this.write(id);
  }

  /** A permission question about a call: what it says of the call (often its whole input) is merged, and the call goes in the log first. */
  async asked(u: acp.ToolCallUpdate): Promise<void> {
    const c = this.open.get(u.toolCallId);
    if (c) merge(c, u);
    await this.write(u.toolCallId);
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

function merge(c: OpenCall, u: CallFields): void {
  if (typeof u.title === 'string' && u.title) c.title = u.title;
  if (typeof u.kind === 'string') c.kind = u.kind;
  if (record(u.rawInput)) Object.assign(c.input, u.rawInput);
  else if (u.rawInput !== undefined && u.rawInput !== null) c.input.input = u.rawInput;
  if (Array.isArray(u.content)) c.content = u.content; // ACP: an update's content replaces the collection
  if (u.rawOutput !== undefined) c.rawOutput = u.rawOutput;
  const meta = record(u._meta) ? u._meta : {};
  const delta = record(meta.terminal_output_delta) ? str(meta.terminal_output_delta.data) : '';
  if (delta) c.output += delta;
  const whole = record(meta.terminal_output) ? str(meta.terminal_output.data) : str(meta.terminal_output);
  if (whole) c.output = whole;
  const exit = record(meta.terminal_exit) ? meta.terminal_exit.exit_code : undefined;
  if (typeof exit === 'number') c.exit = exit;
}
