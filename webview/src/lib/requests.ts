// Requests to the host and their answers (src/protocol.ts `RequestResults`): `send` posts a
// request with a fresh id and returns a promise of its typed result; `settle` resolves or
// rejects it when its `request/done` comes. Pure (the poster is given), so it is tested alone.
import type { RequestBody, RequestDone, RequestResults, RequestType, WebviewToHost } from '../../../src/protocol';

/** A request the host refused or failed: its words, its code when the error had one. */
export class RequestError extends Error {
  override readonly name = 'RequestError';
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

interface Waiting {
  resolve(result: unknown): void;
  reject(err: RequestError): void;
}

export class Requests {
  readonly #waiting = new Map<string, Waiting>();

  constructor(
    private readonly post: (msg: WebviewToHost) => void,
    private readonly newId: () => string,
  ) {}

  /** Post a request; `answer` settles with its result when the host answers (never on its own). */
  send<K extends RequestType>(body: RequestBody<K> & { type: K }): { id: string; answer: Promise<RequestResults[K]> } {
    const id = this.newId();
    const answer = new Promise<RequestResults[K]>((resolve, reject) => this.#waiting.set(id, { resolve: resolve as (r: unknown) => void, reject }));
    this.post({ ...body, id } as WebviewToHost);
    return { id, answer };
  }

  /** The host answered: settle the request's promise. False when no request here waits for `id`. */
  settle(done: RequestDone): boolean {
    const waiting = this.#waiting.get(done.id);
    if (!waiting) return false;
    this.#waiting.delete(done.id);
    if (done.ok) {
      const { type: _type, id: _id, ok: _ok, ...result } = done;
      waiting.resolve(result);
    } else waiting.reject(new RequestError(done.error, done.code));
    return true;
  }

  get pending(): number {
    return this.#waiting.size;
  }
}
