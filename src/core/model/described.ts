import type { CapFieldSetting } from './cap-field';
import { type BuiltRequest, buildRequest, withCap } from './request';
import type { ModelRequest } from './types';

/**
 * The bodies a client's describe() built, kept until their requests stream: a body is
 * serialized once and sent as the text describe() measured and hashed (decision 0064).
 *
 * One cache, one rule (decision 0069): an entry is keyed by the conversation a request carries
 * (its `messages` array and that array's length: a session hands out its live surface, which
 * the next step extends in place — `Session.surfaceNow`), and holds the last request described
 * with it. A request streams the body built for it, and its entry goes; a request described again
 * with only another cap (a budget's grant) moves the body's tail (`withCap`) and takes the
 * entry's place. Anything else (another conversation, model, system prompt or tool set) is
 * built afresh. Entries die with their conversation (a WeakMap): many agents describing and
 * streaming side by side on one client (a fan-out's children) never evict each other's.
 */
export class DescribedBodies {
  private readonly byConversation = new WeakMap<ModelRequest['messages'], { req: ModelRequest; count: number; built: BuiltRequest }>();

  /** The body of `req`: the one described with its conversation, its cap moved, or a new one; kept until `take`. */
  describe(req: ModelRequest, capField: CapFieldSetting | undefined): BuiltRequest {
    const entry = this.byConversation.get(req.messages);
    const same = entry && entry.count === req.messages.length && sameButCap(entry.req, req);
    const built = same ? withCap(entry.built, req.model, req.maxTokens, capField) : buildRequest(req, true, capField);
    this.byConversation.set(req.messages, { req, count: req.messages.length, built });
    return built;
  }

  /**
   * The body described for this very request (it leaves the cache), else one built now. The
   * body is the one measured at `describe` even if the live surface grew since (the request
   * is what was described and budgeted).
   */
  take(req: ModelRequest, capField: CapFieldSetting | undefined): BuiltRequest {
    const entry = this.byConversation.get(req.messages);
    if (entry?.req !== req) return buildRequest(req, true, capField);
    this.byConversation.delete(req.messages);
    return entry.built;
  }
}

/** The same request but for its completion cap: its body differs only in the tail. */
function sameButCap(a: ModelRequest, b: ModelRequest): boolean {
  return a.model === b.model && a.system === b.system && a.tools === b.tools && a.messages === b.messages;
}
