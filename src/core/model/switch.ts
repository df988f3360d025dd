import type { ModelClient, ModelRequest, ModelStreamEvent, RequestInfo } from './types';

/**
 * The deployment's model client, replaceable while agents run: a new API key, base URL or
 * model name takes effect at each agent's next request, and nothing is closed under a
 * running turn (a request already streaming finishes on the client that described it).
 */
export class ModelSwitch implements ModelClient {
  /** Which client described a request, so its stream goes to the same one. */
  private readonly describedBy = new WeakMap<ModelRequest, ModelClient>();

  constructor(private current: ModelClient) {}

  get provider(): string {
    return this.current.provider;
  }

  /** The client in use now (for views and tests). */
  get client(): ModelClient {
    return this.current;
  }

  set(client: ModelClient): void {
    this.current = client;
  }

  describe(req: ModelRequest): RequestInfo {
    this.describedBy.set(req, this.current);
    return this.current.describe(req);
  }

  stream(req: ModelRequest): AsyncIterable<ModelStreamEvent> {
    const client = this.describedBy.get(req) ?? this.current;
    this.describedBy.delete(req);
    return client.stream(req);
  }
}
