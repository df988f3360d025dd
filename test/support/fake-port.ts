import type { ViewPort } from '../../src/extension/controller';
import type { GrantView, HostToWebview, TreeNode } from '../../src/protocol';

/** A view that records what the controller posts it, through JSON as postMessage would. */
export class FakePort implements ViewPort {
  readonly got: HostToWebview[] = [];
  sessionId?: string;
  constructor(
    readonly view: 'panel' | 'transcript',
    sessionId?: string,
  ) {
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
  /** The session a successful answer to request `id` names; throws when there is none. */
  sessionOf(id: string): string {
    const d = this.done(id);
    if (!d?.ok || !('sessionId' in d)) throw new Error(`request ${id} did not succeed with a session: ${JSON.stringify(d)}`);
    return d.sessionId;
  }
  /** The node as last sent. */
  node(id: string): TreeNode | undefined {
    return this.of('tree/node')
      .filter((m) => m.node.id === id)
      .pop()?.node;
  }
  /** A session's grants as last sent. */
  grants(id: string): GrantView[] | undefined {
    return this.of('grants/list')
      .filter((m) => m.sessionId === id)
      .pop()?.grants;
  }
}
