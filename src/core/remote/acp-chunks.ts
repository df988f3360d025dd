import { cutBytes } from '../subagent/remote-bounds';
import type { RemoteSink } from './types';

/**
 * Message and thought chunks arrive a few characters at a time: they stream live at once and
 * are joined here, then handed to the sink as one piece before a tool call and at the end
 * (the sink separates pieces it is given with a blank line; chunks must not be). It holds no
 * more than the turn may still keep (decision 0044): the rest is dropped, and the sink told.
 */
export class ChunkBuffer {
  private text = '';
  private reasoning = '';
  private bytes = 0;

  constructor(private readonly sink: RemoteSink) {}

  add(kind: 'text' | 'reasoning', piece: string): void {
    if (!piece) return;
    this.sink.delta(kind, piece);
    const size = Buffer.byteLength(piece);
    const room = this.sink.bounds.room() - this.bytes;
    const kept = size <= room ? piece : cutBytes(piece, room);
    const keptBytes = kept === piece ? size : Buffer.byteLength(kept);
    if (keptBytes < size) this.sink.cut(kind, size - keptBytes);
    this.bytes += keptBytes;
    if (kind === 'text') this.text += kept;
    else this.reasoning += kept;
  }

  flush(): void {
    if (this.reasoning) this.sink.reasoning(this.reasoning);
    if (this.text) this.sink.text(this.text);
    this.text = this.reasoning = '';
    this.bytes = 0;
  }
}
