import type { SessionWriter } from '../agent/session-writer';
import type { ToolCall, Usage } from '../session/events';
import type { RemoteIdentity, RemoteSink } from './types';

/** What an unanswered call is closed with, so the log stays whole (the program never said how it ended). */
export const UNANSWERED = 'The remote program reported no result for this call.';

/**
 * The one sink every remote driver writes through (decision 0035): it turns a program's
 * stream into valid session events. Text and reasoning stream live (`onDelta`) and are
 * buffered into one `assistant/message`, written before a tool call or at the end; call ids
 * are made unique within the turn; a result for an unknown (or already answered) call is
 * dropped and counted; the program's tool names carry its prefix; the turn's usage goes on
 * its last assistant message (an empty one when nothing else is left to say).
 */
export class SessionSink implements RemoteSink {
  private textBuf = '';
  private reasoningBuf = '';
  private modelName: string;
  private total: Usage | undefined;
  /** The program's call id → the id in our log (made unique: `id#2`). */
  private readonly ids = new Map<string, string>();
  private readonly used = new Set<string>();
  private readonly pending = new Map<string, string>();
  private identified = false;
  /** Skipped lines and events by kind (non-JSON, unknown type, result for an unknown call…). */
  readonly skippedCounts: Record<string, number> = {};

  constructor(
    private readonly w: SessionWriter,
    private readonly prefix: string,
    model: string,
    private readonly onDelta?: (kind: 'text' | 'reasoning', delta: string) => void,
  ) {
    this.modelName = model;
  }

  delta(kind: 'text' | 'reasoning', text: string): void {
    if (text) this.onDelta?.(kind, text);
  }

  text(text: string): void {
    if (text) this.textBuf += this.textBuf ? `\n\n${text}` : text;
  }

  reasoning(text: string): void {
    if (text) this.reasoningBuf += this.reasoningBuf ? `\n\n${text}` : text;
  }

  model(name: string): void {
    if (name) this.modelName = name;
  }

  async toolCall(id: string, name: string, args: unknown): Promise<void> {
    const base = id || 'call';
    let local = base;
    for (let n = 2; this.used.has(local); n++) local = `${base}#${n}`;
    this.used.add(local);
    this.ids.set(base, local); // a reused id now names its latest call
    const call: ToolCall = { id: local, name: `${this.prefix}:${name || 'tool'}`, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) };
    await this.write([call]);
    this.pending.set(local, call.name);
  }

  async toolResult(id: string, content: string, isError: boolean): Promise<void> {
    const local = this.ids.get(id);
    const name = local === undefined ? undefined : this.pending.get(local);
    if (local === undefined || name === undefined) return this.skipped('result-for-unknown-call');
    this.pending.delete(local);
    await this.w.append({ type: 'tool/result', callId: local, name, content, isError });
  }

  usage(u: Usage): void {
    this.total = u;
  }

  async external(info: RemoteIdentity): Promise<void> {
    if (this.identified) return;
    this.identified = true;
    await this.w.append({ type: 'subagent/remote', ...info });
  }

  skipped(kind: string): void {
    this.skippedCounts[kind] = (this.skippedCounts[kind] ?? 0) + 1;
  }

  /** Write the text and reasoning buffered so far as one assistant message now (something else goes in the log next). */
  async flush(): Promise<void> {
    if (this.textBuf || this.reasoningBuf) await this.write();
  }

  /** Close every unanswered call, then write what is buffered with the turn's usage. */
  async finish(): Promise<void> {
    for (const [id, name] of [...this.pending]) {
      this.pending.delete(id);
      await this.w.append({ type: 'tool/result', callId: id, name, content: UNANSWERED, isError: true });
    }
    if (this.textBuf || this.reasoningBuf || this.total) await this.write(undefined, this.total);
    this.total = undefined;
  }

  /** Buffered text and reasoning (and these calls) as one assistant message. */
  private async write(calls?: ToolCall[], usage?: Usage): Promise<void> {
    const text = this.textBuf;
    const reasoning = this.reasoningBuf;
    this.textBuf = this.reasoningBuf = '';
    await this.w.append({
      type: 'assistant/message',
      text,
      model: this.modelName,
      ...(reasoning ? { reasoning } : {}),
      ...(calls?.length ? { toolCalls: calls } : {}),
      ...(usage ? { usage } : {}),
    });
  }
}
