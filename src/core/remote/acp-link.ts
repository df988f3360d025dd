import type * as Acp from '@agentclientprotocol/sdk/unstable';
import { REMOTE_BOUNDS } from '../subagent/remote-bounds';
import { processStream } from './acp-stream';
import { type ProcessSpec, RemoteProcess } from './process';

/**
 * One ACP connection: an agent's process and the JSON-RPC stream over its stdio, carrying one
 * or many sessions (decision 0077). A configured ACP agent gets one per turn; a placement keeps
 * one (`KeptLink`) and every child placed there is a session on it — a child then costs a
 * `session/new`, not a process start and a login. The link routes each `session/update` and
 * permission request to the session it names, or to the session a sub-session was announced
 * under (`subagent_update`); what names no session it knows is dropped.
 */
export interface LinkSession {
  /** An update of this session or of a sub-session announced under it; resolved once applied (the link's backpressure waits for it). */
  update(n: Acp.SessionNotification): Promise<void>;
  /** The agent asks permission for this session or a sub-session of it. */
  permission(p: Acp.RequestPermissionRequest): Promise<Acp.RequestPermissionResponse>;
  /** A line the link skipped (not JSON, too long): counted by every session on it. */
  skipped(kind: string): void;
}

/** Updates received and not yet applied before the link stops reading the agent's stdout (it then waits on its pipe). */
const MAX_PENDING_UPDATES = 256;

/** The answer to a permission request for a session the link no longer routes (its turn is over): nothing is allowed. */
const CANCELLED: Acp.RequestPermissionResponse = { outcome: { outcome: 'cancelled' } };

export class AcpLink {
  readonly proc: RemoteProcess;
  readonly conn: Acp.ClientConnection;
  /** Sessions open on the other side over this link, with their modes: a later turn of the same child needs no `session/load`. */
  readonly known = new Map<string, Acp.SessionModeState | undefined>();
  private readonly routes = new Map<string, LinkSession>();
  /** How many sub-session routes each session has (bounded like its mirrors, decision 0044). */
  private readonly subRoutes = new Map<LinkSession, number>();
  private init: Promise<Acp.InitializeResponse> | undefined;
  private pending = 0;
  private drained: (() => void) | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly acp: typeof Acp,
    spec: ProcessSpec,
    /** Written before the ACP stream (a placement's key, read by the other side's prelude): never on a command line. */
    preamble: string | undefined,
    private readonly clientCapabilities: Acp.ClientCapabilities,
  ) {
    this.proc = new RemoteProcess(spec);
    if (preamble) this.proc.child.stdin?.write(preamble);
    const app = acp
      .client({ name: 'arbor' })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        const to = this.to(params.sessionId);
        if (!to) return undefined;
        // A sub-session announced under a routed session goes where its parent goes (its updates and its questions).
        if (params.update.sessionUpdate === 'subagent_update') this.routeSub(params.update.sessionId, to);
        this.pending++;
        void to.update(params).finally(() => {
          this.pending--;
          if (this.pending < MAX_PENDING_UPDATES) this.drained?.();
        });
        return undefined;
      })
      .onRequest(acp.methods.client.session.requestPermission, ({ params }) => this.to(params.sessionId)?.permission(params) ?? CANCELLED);
    this.conn = app.connect(
      processStream(
        this.proc,
        (kind) => {
          for (const s of new Set(this.routes.values())) s.skipped(kind);
        },
        () => this.backlog(),
      ),
    );
  }

  /** `initialize`, once per link (every session on it shares the answer). */
  initialize(): Promise<Acp.InitializeResponse> {
    if (!this.init) {
      const init = this.conn.agent.request(this.acp.methods.agent.initialize, {
        protocolVersion: this.acp.PROTOCOL_VERSION,
        clientCapabilities: this.clientCapabilities,
        clientInfo: { name: 'arbor', version: '1' },
      });
      // A refused initialize is asked again by the next turn, not remembered for the link's life.
      init.catch(() => {
        if (this.init === init) this.init = undefined;
      });
      this.init = init;
    }
    return this.init;
  }

  /** Messages for `sessionId` (and its announced sub-sessions) go to `to` from now on; `*`: every message no other route takes. */
  route(sessionId: string, to: LinkSession): void {
    this.routes.set(sessionId, to);
  }

  /** Nothing goes to `to` any more (its turn is over). */
  unroute(to: LinkSession): void {
    for (const [id, s] of this.routes) if (s === to) this.routes.delete(id);
    this.subRoutes.delete(to);
  }

  /**
   * A sub-session `to` announced goes where `to` goes — an id no other route has, a name (at most
   * REMOTE_BOUNDS.idChars), and no more of them than its mirrors show (REMOTE_BOUNDS.subSessions):
   * an agent announcing endless or huge ids must not grow the host's memory (decision 0044).
   */
  private routeSub(id: string, to: LinkSession): void {
    if (typeof id !== 'string' || !id || id.length > REMOTE_BOUNDS.idChars || this.routes.has(id)) return;
    const n = this.subRoutes.get(to) ?? 0;
    if (n >= REMOTE_BOUNDS.subSessions) return;
    this.subRoutes.set(to, n + 1);
    this.routes.set(id, to);
  }

  private to(sessionId: string): LinkSession | undefined {
    return this.routes.get(sessionId) ?? this.routes.get('*');
  }

  /** No session is routed: nothing on the link is under way for anyone. */
  get idle(): boolean {
    return this.routes.size === 0;
  }

  /** The process has not exited and the link is not being closed. */
  get usable(): boolean {
    return !this.closing && this.proc.child.exitCode === null && this.proc.child.signalCode === null && !this.proc.child.killed;
  }

  /** Close it: the stream, then stdin (an agent may leave by itself, briefly awaited), then whatever is left of its group. */
  close(eofGraceMs: number): Promise<void> {
    this.closing ??= (async () => {
      this.conn.close();
      this.proc.child.stdin?.end();
      const left = await Promise.race([this.proc.exited.then(() => true), delay(eofGraceMs).then(() => false)]);
      if (!left) await this.proc.stop();
      else await this.proc.reapGroup();
    })();
    return this.closing;
  }

  /** Resolves once the updates received so far are few enough to read more (undefined: read on). */
  private backlog(): Promise<void> | undefined {
    if (this.pending < MAX_PENDING_UPDATES) return undefined;
    return new Promise<void>((resolve) => {
      this.drained = () => {
        this.drained = undefined;
        resolve();
      };
    });
  }
}

/**
 * The link a placement keeps (decision 0077): made by the first turn that needs it, shared by
 * every turn after it while its process lives, closed after `idleMs` with no session on it (or
 * when the placement closes). A link that died (the process left: the link dropped) is replaced
 * by the next turn's.
 */
export class KeptLink {
  private current: Promise<AcpLink> | undefined;
  private users = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly idleMs: number,
    private readonly eofGraceMs: number,
  ) {}

  /** The live link, or a new one from `make`; the caller gives it back with `release` (also when this throws). */
  async take(make: () => AcpLink): Promise<AcpLink> {
    clearTimeout(this.idleTimer);
    this.users++;
    for (;;) {
      const cur = this.current;
      if (cur) {
        const have = await cur.catch(() => undefined);
        if (have?.usable) return have;
        if (this.current !== cur) continue; // another turn replaced it meanwhile: take that one
        if (have) void have.close(this.eofGraceMs); // the dropped link's group goes
      }
      // No await between the look and the replacement: the turns of one moment share one new link.
      this.current = Promise.resolve().then(make);
      return this.current;
    }
  }

  /** A turn is done with the link; the last one out starts the idle clock. */
  release(): void {
    this.users = Math.max(0, this.users - 1);
    if (this.users > 0 || !this.current) return;
    const link = this.current;
    this.idleTimer = setTimeout(() => {
      if (this.users === 0 && this.current === link) {
        this.current = undefined;
        void link.then((l) => l.close(this.eofGraceMs)).catch(() => undefined);
      }
    }, this.idleMs);
    this.idleTimer.unref?.();
  }

  /** Close the link now (the placement closes). */
  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    const link = this.current;
    this.current = undefined;
    await link?.then((l) => l.close(this.eofGraceMs)).catch(() => undefined);
  }
}

const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref?.());
