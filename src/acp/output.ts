import type { AnyMessage } from '@agentclientprotocol/sdk/unstable';

/** Where the batched bytes go: stdout, or a test's sink. */
export interface ByteSink {
  write(text: string): void;
}

/**
 * `arbor acp`'s stdout (decision 0065): the ACP messages of a moment leave in one write, so a
 * client wakes once for a burst (a feed flush, a prompt's last updates and its answer) instead
 * of once per message.
 *
 * Order is kept: one FIFO buffer, written whole. A notification may wait up to `holdMs` for
 * company (0: the end of the tick); anything with an `id` — a request the client must answer,
 * or our answer to one — goes out at the end of the current tick with everything before it.
 * `flush()` writes what is held now (before exit).
 *
 * Within the SDK's stream contract: the SDK awaits each `write` in order and only learns of a
 * failure through a rejected write; here a write resolves once its bytes are queued, and once
 * the sink has failed every later write rejects (the SDK then closes the connection), as a
 * failed write to stdout did before.
 */
export class BatchedOutput {
  private held = '';
  private timer: NodeJS.Timeout | undefined;
  private soon: NodeJS.Immediate | undefined;
  private failed: unknown;

  constructor(
    private readonly sink: ByteSink,
    private readonly holdMs: number,
  ) {}

  /** The SDK's side: JSON-RPC messages, one per line. */
  messages(): WritableStream<AnyMessage> {
    return new WritableStream<AnyMessage>({ write: (m) => this.push(`${JSON.stringify(m)}\n`, 'id' in m) });
  }

  /** Bytes already encoded (the SDK's own replies to malformed input): answers, so they go out this tick. */
  bytes(): WritableStream<Uint8Array> {
    const decoder = new TextDecoder();
    return new WritableStream<Uint8Array>({ write: (b) => this.push(decoder.decode(b, { stream: true }), true) });
  }

  /** A message of our own outside the SDK (a refused line's answer, `input-guard.ts`): it goes out this tick. Dropped once stdout has failed. */
  send(message: AnyMessage): void {
    if (this.failed === undefined) this.push(`${JSON.stringify(message)}\n`, true);
  }

  /** Write everything held now. */
  flush(): void {
    this.stop();
    if (!this.held || this.failed !== undefined) return;
    const text = this.held;
    this.held = '';
    try {
      this.sink.write(text);
    } catch (err) {
      this.fail(err);
    }
  }

  /** The sink failed (stdout closed): what is held is dropped and every later write rejects. */
  fail(err: unknown): void {
    this.failed ??= err;
    this.held = '';
    this.stop();
  }

  private stop(): void {
    clearTimeout(this.timer);
    clearImmediate(this.soon);
    this.timer = this.soon = undefined;
  }

  private push(text: string, answer: boolean): void {
    if (this.failed !== undefined) throw this.failed;
    this.held += text;
    // An answer goes at the end of this tick, not now: the rest of the burst (the SDK writes each
    // message a few microtasks after the last) joins the same write.
    if (answer || this.holdMs <= 0) this.soon ??= setImmediate(() => this.flush());
    else if (!this.soon) this.timer ??= setTimeout(() => this.flush(), this.holdMs);
  }
}
