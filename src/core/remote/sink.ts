import type { SessionWriter } from '../agent/session-writer';
import { copyData } from '../session/copy';
import type { EventDraft, Refusal, ToolCall, Usage } from '../session/events';
import { estimateTokens } from '../session/summary';
import { countSkipped, cutBytes, cutOf, REMOTE_BOUNDS, sizeOf, TurnBounds } from '../subagent/remote-bounds';
import type { RemoteIdentity, RemoteSink } from './types';

/** What an unanswered call is closed with, so the log stays whole (the program never said how it ended). */
export const UNANSWERED = 'The remote program reported no result for this call.';

/** A program's call id and tool name are names: this long at most in the log. */
const ID_CHARS = 200;

type AssistantDraft = Extract<EventDraft, { type: 'assistant/message' }>;

/** What a call or result that writes nothing returns (most lines of a long turn past its bounds). */
const DONE: Promise<void> = Promise.resolve();

/**
 * The one sink every remote driver writes through (decision 0035): it turns a program's
 * stream into valid session events. Text and reasoning stream live (`onDelta`) and are
 * buffered into one `assistant/message`, written before a tool call or at the end; call ids
 * are made unique within the turn; a result for an unknown (or already answered) call is
 * dropped and counted; the program's tool names carry its prefix; the turn's usage goes on
 * its last assistant message (an empty one when nothing else is left to say).
 *
 * It keeps a bounded turn (decision 0044, `REMOTE_BOUNDS`): text, reasoning, call arguments and
 * results are charged to the turn's `bounds` (shared with the sinks of an ACP agent's
 * sub-sessions), what does not fit is dropped, and the turn's last message says what was.
 */
export class SessionSink implements RemoteSink {
  private textBuf = '';
  private reasoningBuf = '';
  private modelName: string;
  /** The model the program said it runs (absent: it never said). */
  private said: string | undefined;
  private total: Usage | undefined;
  /** The program's call id → the id in our log (made unique: `id#2`). */
  private readonly ids = new Map<string, string>();
  private readonly used = new Set<string>();
  private readonly pending = new Map<string, string>();
  private identified = false;
  /** Refusal marks for calls in the log (our id), put on their results. */
  private readonly refusals = new Map<string, Refusal>();
  /** Bytes streamed live so far (REMOTE_BOUNDS.streamBytes). */
  private streamed = 0;
  /**
   * What streamed live since the program last gave a whole message (issue 21.3): a program
   * stopped mid-message never sends that message, and what the user watched arrive is kept,
   * as a built-in child keeps its partial reply. Bounded by the stream cap above.
   */
  private readonly unsaid = { text: '', reasoning: '' };
  /** What this sink dropped, by what it was: bytes, and calls. */
  private readonly cuts = new Map<string, number>();
  private callsCut = 0;
  /** Skipped lines and events by kind (non-JSON, unknown type, result for an unknown call…). */
  readonly skippedCounts: Record<string, number> = {};

  constructor(
    private readonly w: SessionWriter,
    private readonly prefix: string,
    model: string,
    private readonly onDelta?: (kind: 'text' | 'reasoning', delta: string) => void,
    readonly bounds: TurnBounds = new TurnBounds(),
  ) {
    this.modelName = model;
  }

  delta(kind: 'text' | 'reasoning', text: string): void {
    if (!text) return;
    const room = REMOTE_BOUNDS.streamBytes - this.streamed;
    if (room <= 0) return this.skipped('delta-over-limit');
    const bytes = Buffer.byteLength(text);
    const piece = bytes <= room ? text : cutBytes(text, room);
    this.streamed += Math.min(bytes, room);
    if (!piece) return;
    this.unsaid[kind] += piece;
    this.onDelta?.(kind, piece);
  }

  text(text: string): void {
    this.unsaid.text = ''; // the whole message supersedes what streamed of it
    const kept = this.keep('text', text);
    if (kept) this.textBuf += this.textBuf ? `\n\n${kept}` : kept;
  }

  reasoning(text: string): void {
    this.unsaid.reasoning = '';
    const kept = this.keep('reasoning', text);
    if (kept) this.reasoningBuf += this.reasoningBuf ? `\n\n${kept}` : kept;
  }

  cut(what: string, bytes: number): void {
    if (bytes > 0) this.cuts.set(what, (this.cuts.get(what) ?? 0) + bytes);
  }

  refused(id: string, refusal: Refusal): void {
    const local = this.ids.get(cutOf(id, ID_CHARS));
    if (local !== undefined && this.pending.has(local)) this.refusals.set(local, refusal);
  }

  /** What fits of a piece (the turn's room, at most `max`); the rest is counted as cut. */
  private keep(what: string, text: string, max?: number): string {
    if (!text) return '';
    const { kept, dropped } = this.bounds.take(text, max);
    this.cut(what, dropped);
    return kept;
  }

  model(name: string): void {
    if (!name) return;
    // A name the program gives, carried by every message of the turn: cut like its other names (decision 0044).
    const short = cutBytes(name, ID_CHARS);
    this.modelName = short;
    this.said = short;
  }

  /** The model the program reported running, if it did (the child's descriptor records it). */
  get reportedModel(): string | undefined {
    return this.said;
  }

  // Not async itself: a call past the turn's bounds (every later line of a long turn) costs no promise of its own.
  toolCall(id: string, name: string, args: unknown): Promise<void> {
    if (!this.bounds.call()) {
      this.callsCut++; // its result, when it comes, is for an unknown call: dropped
      return DONE;
    }
    return this.call(id, name, args);
  }

  private async call(id: string, name: string, args: unknown): Promise<void> {
    const base = cutOf(id || 'call', ID_CHARS);
    let local = base;
    for (let n = 2; this.used.has(local); n++) local = `${base}#${n}`;
    this.used.add(local);
    this.ids.set(base, local); // a reused id now names its latest call
    const whole = typeof args === 'string' ? args : JSON.stringify(args ?? {});
    const kept = this.keep('tool call arguments', whole, REMOTE_BOUNDS.itemBytes);
    // Cut arguments are no longer JSON: what is left of them goes in a JSON object of its own.
    const argsText = kept === whole ? whole : JSON.stringify({ cut: kept, bytes: Buffer.byteLength(whole) });
    const named = `${this.prefix}:${cutOf(name || 'tool', ID_CHARS)}`;
    // Handed over (decision 0118): the message and its call are the log's from here on.
    await this.w.write(this.message([{ id: local, name: named, arguments: argsText }]));
    this.pending.set(local, named);
  }

  toolResult(id: string, content: string, isError: boolean): Promise<void> {
    const local = this.ids.get(cutOf(id, ID_CHARS));
    const name = local === undefined ? undefined : this.pending.get(local);
    if (local === undefined || name === undefined) {
      this.skipped('result-for-unknown-call');
      return DONE;
    }
    this.pending.delete(local);
    return this.answer(local, name, content, isError);
  }

  private async answer(local: string, name: string, content: string, isError: boolean): Promise<void> {
    const { kept, dropped } = this.bounds.take(content, REMOTE_BOUNDS.itemBytes);
    this.cut('tool results', dropped);
    const text = dropped > 0 ? `${kept}\n[Arbor cut this result here: ${sizeOf(dropped)} more were dropped (decision 0044).]` : content;
    await this.append(local, name, text, isError);
  }

  /** A result into the log, handed over (decision 0118): a refusal the driver gave is copied, the rest is strings. */
  private append(callId: string, name: string, content: string, isError: boolean): Promise<void> {
    const refusal = this.refusals.get(callId);
    this.refusals.delete(callId);
    return this.w.write(
      refusal
        ? { type: 'tool/result', callId, name, content, isError: true, refusal: copyData(refusal) }
        : { type: 'tool/result', callId, name, content, isError },
    );
  }

  /**
   * The program's usage as counts the log takes (decision 0044): a program may report more than
   * 2^53 tokens (1e308, or sums of such that overflow to Infinity), which no event may hold; such
   * a count is held at the largest safe integer (spent, as far as any budget is concerned).
   */
  usage(u: Usage): void {
    const c = (n: number): number => (Number.isNaN(n) || n < 0 ? 0 : Math.min(Math.round(n), Number.MAX_SAFE_INTEGER));
    const held: Usage = { promptTokens: c(u.promptTokens), completionTokens: c(u.completionTokens) };
    if (u.cacheHitTokens !== undefined) held.cacheHitTokens = c(u.cacheHitTokens);
    if (u.cacheMissTokens !== undefined) held.cacheMissTokens = c(u.cacheMissTokens);
    if (u.costUsd !== undefined && Number.isFinite(u.costUsd) && u.costUsd >= 0) held.costUsd = u.costUsd;
    this.total = held;
  }

  async external(info: RemoteIdentity): Promise<void> {
    if (this.identified) return;
    this.identified = true;
    // The program names itself: a name, not a document.
    const short = {
      ...info,
      ...(info.version ? { version: cutOf(info.version, ID_CHARS) } : {}),
      ...(info.externalId ? { externalId: cutOf(info.externalId, ID_CHARS) } : {}),
    };
    await this.w.append({ type: 'subagent/remote', ...short });
  }

  skipped(kind: string): void {
    countSkipped(this.skippedCounts, kind);
  }

  /** Write the text and reasoning buffered so far as one assistant message now (something else goes in the log next). */
  async flush(): Promise<void> {
    if (this.textBuf || this.reasoningBuf) await this.w.write(this.message());
  }

  /**
   * Close every unanswered call, then write what is buffered with the turn's usage (and what was
   * cut, said). A program that started (it said who it is) and reported no usage — stopped, one
   * that never reports, or one that reports zeros — spent at least the prompt it was handed (`promptBytes`): that, and the
   * reply buffered here, go on the message as an estimate.
   */
  async finish(promptBytes?: number): Promise<void> {
    // A message cut short (Stop, a crash of the program) is kept as far as it streamed.
    if (this.unsaid.reasoning) this.reasoning(this.unsaid.reasoning);
    if (this.unsaid.text) this.text(this.unsaid.text);
    for (const [id, name] of [...this.pending]) {
      this.pending.delete(id);
      await this.append(id, name, UNANSWERED, true);
    }
    const note = this.cutNote();
    if (note) this.textBuf += this.textBuf ? `\n\n${note}` : note;
    // A program that says it spent nothing (0 in, 0 out: a server that does not count) was still
    // handed its prompt: zeros are no report, and the estimate counts instead.
    if (this.total && this.total.promptTokens === 0 && this.total.completionTokens === 0 && !this.total.costUsd) this.total = undefined;
    const guess =
      !this.total && promptBytes !== undefined && this.identified
        ? { promptTokens: estimateTokens(promptBytes), completionTokens: estimateTokens(this.textBuf.length + this.reasoningBuf.length) }
        : undefined;
    const usage = this.total ?? guess;
    // Handed over with its usage (an object of this sink's own, replaced and never changed, or the guess).
    if (this.textBuf || this.reasoningBuf || usage) await this.w.write({ ...this.message(undefined, usage), ...(guess ? { estimated: true as const } : {}) });
    this.total = undefined;
  }

  /** One sentence of what this turn dropped, or '' (it goes last in the turn, where the parent's answer ends). */
  private cutNote(): string {
    const parts = [...this.cuts].map(([what, bytes]) => `${sizeOf(bytes)} of ${what}`);
    if (this.callsCut) parts.push(`${this.callsCut} tool call${this.callsCut === 1 ? '' : 's'} (after the first ${REMOTE_BOUNDS.toolCalls})`);
    if (!parts.length) return '';
    this.cuts.clear();
    this.callsCut = 0;
    return `[Arbor kept only part of this remote turn: a turn keeps at most ${sizeOf(REMOTE_BOUNDS.turnBytes)} of text, reasoning, tool calls and results (${sizeOf(REMOTE_BOUNDS.itemBytes)} per call or result, ${REMOTE_BOUNDS.toolCalls} calls), and ${parts.join(', ')} were dropped. The program itself saw everything; ask it for a shorter answer, or to write long output to a file.]`;
  }

  /** Buffered text and reasoning (and these calls) as one assistant message; the buffers are emptied. */
  private message(calls?: ToolCall[], usage?: Usage): AssistantDraft {
    const m: AssistantDraft = { type: 'assistant/message', text: this.textBuf, model: this.modelName };
    // Set only when present (no spread of a throw-away object per message): the same keys in the same order as before.
    if (this.reasoningBuf) m.reasoning = this.reasoningBuf;
    if (calls?.length) m.toolCalls = calls;
    if (usage) m.usage = usage;
    this.textBuf = this.reasoningBuf = '';
    return m;
  }
}
