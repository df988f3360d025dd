import type { ViewPort } from '../../src/extension/controller';
import type { HostToWebview } from '../../src/protocol';

/** A view that records what the controller posts it, through JSON as postMessage would. */
export class FakePort implements ViewPort {
  readonly got: HostToWebview[] = [];
  sessionId?: string;
  constructor(readonly view: 'panel' | 'transcript', sessionId?: string) {
    if (sessionId) this.sessionId = sessionId;
  }
  post(msg: HostToWebview): void {
    this.got.push(JSON.parse(JSON.stringify(msg)) as HostToWebview);
  }
  of<T extends HostToWebview['type']>(type: T): Extract<HostToWebview, { type: T }>[] {
    return this.got.filter((m): m is Extract<HostToWebview, { type: T }> => m.type === type);
  }
  /** The answer to request `id`, once it came. */
  done(id: string): Extract<HostToWebview, { type: 'request/done' }> | undefined {
    return this.of('request/done').find((m) => m.id === id);
  }
}
