import { describeError } from '../errors';
import type { ScopeRegistry } from '../scope/registry';
import { fail } from '../tools/result';
import type { Tool, ToolContext, ToolResult } from '../tools/tool';
import { type McpConfigError, type McpServerConfig, needsAllow } from './config';
import type { McpConnection, McpToolDef, ToolListing } from './connection';
import type { McpDeployment } from './deployment';
import { clip } from './limits';
import { allowCovers } from './names';
import { mapResult } from './result';
import { redact, runsLine, secretsOf } from './secrets';
import { type McpServerState, notReadyMessage } from './state';
import { mcpTool } from './tool';
import { type RegisteredTool, syncTools } from './tool-sync';

interface Entry {
  config: McpServerConfig;
  state: McpServerState;
  secrets: string[];
  conn?: McpConnection;
  tools: Map<string, RegisteredTool>;
  timer?: NodeJS.Timeout;
  /** Bumped by every start and stop: a late answer of an older start is dropped. */
  generation: number;
  starting?: Promise<void>;
  lastStderr?: string;
  /** When it last became ready: a server that stayed up a while has its restart count start over. */
  readyAt?: number;
  /** What its last listing left out (too many tools, a schema too big, a name taken): its `why` while ready. */
  leftOut?: string;
  /** The listing under way for a start, and whether a `list_changed` came meanwhile (one more listing after it, never a pile). */
  listing?: { gen: number; again: boolean; done: Promise<void> };
}

/** Up this long, a server that goes away again counts its restarts from zero. */
const STABLE_MS = 60_000;

/** The longest a model request waits for servers still on their first start (decision 0055 amended): then it goes without their tools. */
export const FIRST_START_WAIT_MS = 10_000;

/**
 * The MCP client side of a deployment (decision 0055): one entry per configured server, its
 * connection, its state, and its tools registered as `mcp__<server>__<tool>` in the global
 * tool scope (so every view, filters and policy apply as to any tool). A server that goes away
 * restarts with a doubling backoff, a bounded number of times; its tools answer with a clear
 * error meanwhile. Every change of a server's state reaches `onChange` listeners (the harness
 * puts it on its change stream).
 */
export class McpManager {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<() => void>();
  private errors: McpConfigError[] = [];
  private closed = false;

  constructor(
    private readonly deps: { tools: ScopeRegistry<Tool>; roots: readonly string[] },
    private deployment: McpDeployment = { servers: [] },
  ) {
    this.setServers(deployment);
  }

  private get maxRestarts(): number {
    return this.deployment.maxRestarts ?? 5;
  }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  states(): McpServerState[] {
    return [...this.entries.values()].map((e) => ({ ...e.state }));
  }

  configErrors(): McpConfigError[] {
    return [...this.errors];
  }

  /** A server's pid while it runs over stdio (tests kill it). */
  pidOf(name: string): number | undefined {
    return this.entries.get(name)?.conn?.pid;
  }

  /**
   * Take a new server list (settings edited, a config file changed, an ACP session's servers):
   * servers gone or changed stop, new ones start (workspace ones only once allowed).
   */
  setServers(d: McpDeployment): void {
    this.deployment = d;
    this.errors = [...(d.errors ?? [])];
    const next = new Map(d.servers.map((s) => [s.name, s]));
    for (const [name, e] of this.entries) {
      const n = next.get(name);
      if (!n || JSON.stringify(n) !== JSON.stringify(e.config)) {
        void this.stop(e);
        this.entries.delete(name);
      }
    }
    for (const s of d.servers) {
      const known = this.entries.get(s.name);
      // Allowed meanwhile (trust granted, an allow remembered elsewhere): it starts now.
      if (known?.state.phase === 'needs-allow' && this.mayStart(s)) void this.start(known);
      if (known) continue;
      const e: Entry = {
        config: s,
        state: { name: s.name, source: s.source, ...(s.file ? { file: s.file } : {}), phase: 'starting', toolCount: 0, restarts: 0 },
        secrets: secretsOf(s),
        tools: new Map(),
        generation: 0,
      };
      this.entries.set(s.name, e);
      if (this.mayStart(s)) void this.start(e);
      else this.set(e, { phase: 'needs-allow', ...this.whyNotStarted(s) });
    }
    this.changed();
  }

  /** More servers next to the ones configured (an ACP client's): one of the same name is replaced. */
  addServers(servers: readonly McpServerConfig[]): void {
    if (servers.length === 0) return;
    const names = new Set(servers.map((s) => s.name));
    this.setServers({ ...this.deployment, servers: [...this.deployment.servers.filter((s) => !names.has(s.name)), ...servers] });
  }

  /**
   * What a server runs, for a human deciding whether to allow it: the command line (its
   * configured secrets redacted, cut to 300 characters) or the URL without its query.
   */
  runs(name: string): string | undefined {
    const e = this.entries.get(name);
    return e ? runsLine(e.config) : undefined;
  }

  /** The user allowed a workspace server: remember it, and start it. */
  async allow(name: string): Promise<McpServerState> {
    const e = this.entries.get(name);
    if (!e) throw new Error(`There is no MCP server named "${name}"; the configured ones are: ${[...this.entries.keys()].join(', ') || 'none'}.`);
    if (needsAllow(e.config.source) && this.deployment.workspaceTrusted === false)
      throw new Error(`MCP server "${name}" comes from the workspace, and this workspace is not trusted: trust the workspace first.`);
    await this.deployment.trust?.allow(e.config);
    if (e.state.phase === 'needs-allow') await this.start(e);
    return { ...e.state };
  }

  /** Wait until no server is starting (tests, the CLI before its first turn, a bench). */
  async whenSettled(): Promise<void> {
    for (let i = 0; i < 1000; i++) {
      const pending = [...this.entries.values()].flatMap((e) => (e.starting ? [e.starting] : []));
      if (pending.length === 0) return;
      await Promise.all(pending);
    }
  }

  /**
   * Servers on their first start (not a restart's backoff, not one waiting for an allow): a
   * promise that settles once each is listed or failed, after `boundMs` (at most the start
   * timeout), or when `signal` aborts, whichever is first; undefined when none is starting, so a
   * request pays nothing then. A model request waits for it, so the first request after an open
   * carries the tools the user configured instead of a head without them. Never rejects.
   */
  firstStarts(signal: AbortSignal, boundMs = FIRST_START_WAIT_MS): Promise<void> | undefined {
    const pending = [...this.entries.values()].flatMap((e) => (e.starting && e.state.phase === 'starting' ? [e.starting] : []));
    if (pending.length === 0 || signal.aborted) return undefined;
    const wait = Math.min(boundMs, this.deployment.startTimeoutMs ?? 30_000);
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, wait);
      signal.addEventListener('abort', done, { once: true });
      Promise.all(pending).then(done, done);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.entries.values()].map((e) => this.stop(e)));
    this.entries.clear();
  }

  private mayStart(s: McpServerConfig): boolean {
    if (!needsAllow(s.source)) return true;
    return this.deployment.workspaceTrusted !== false && !!this.deployment.trust?.isAllowed(s);
  }

  /** Why a workspace server waits, in words, and whether it waits because it changed since its allow. */
  private whyNotStarted(s: McpServerConfig): Pick<McpServerState, 'why' | 'changedSinceAllowed'> {
    if (this.deployment.workspaceTrusted === false) return { why: 'the workspace is not trusted, so its MCP servers do not start' };
    if (this.deployment.trust?.allowedBefore?.(s.name))
      return {
        why: `defined in ${s.file ?? 'the workspace'}; what it runs changed since it was allowed, so it starts once you allow it again`,
        changedSinceAllowed: true,
      };
    return { why: `defined in ${s.file ?? 'the workspace'}; it starts once you allow it` };
  }

  private start(e: Entry): Promise<void> {
    if (this.closed) return Promise.resolve();
    const gen = ++e.generation;
    e.conn = undefined;
    this.set(e, { phase: e.state.restarts > 0 ? 'restarting' : 'starting', changedSinceAllowed: undefined });
    const p = (async () => {
      let conn: McpConnection | undefined;
      try {
        // The MCP SDK (and its schemas) load with the first server that starts, not with every harness (decision 0068).
        const { McpConnection } = await import('./connection');
        conn = await McpConnection.open(
          e.config,
          { roots: this.deps.roots, timeoutMs: this.deployment.startTimeoutMs ?? 30_000 },
          {
            toolsChanged: () => {
              // A listing's failure is the state's `why` (refreshTools); nothing may reject past here.
              if (e.generation === gen) this.relist(e, gen).catch(() => undefined);
            },
            // Only a server that was up is lost: a failed start is the catch's to handle.
            closed: (why) => {
              if (e.generation === gen && e.conn) this.lost(e, why);
            },
            stderr: (line) => {
              e.lastStderr = line.slice(0, 300);
            },
          },
        );
        if (e.generation !== gen || this.closed) {
          await conn.close();
          return;
        }
        e.conn = conn;
        await this.relist(e, gen);
        if (e.generation !== gen) return;
        e.readyAt = Date.now();
        this.set(e, { phase: 'ready', why: e.leftOut });
      } catch (err) {
        if (e.generation !== gen) return;
        const why = this.say(e, `it did not start: ${describeError(err)}${e.lastStderr ? ` (stderr: ${e.lastStderr})` : ''}`);
        if (conn) await conn.close();
        e.conn = undefined;
        if (e.state.restarts > 0) this.lost(e, why);
        else this.set(e, { phase: 'failed', why });
      }
    })().finally(() => {
      if (e.starting === p) e.starting = undefined;
    });
    e.starting = p;
    return p;
  }

  /** It went away: its tools stay listed (and answer an error) while a restart is due after a backoff. */
  private lost(e: Entry, why: string): void {
    e.conn = undefined;
    if (this.closed) return;
    const reason = this.say(e, why);
    if (e.readyAt !== undefined && Date.now() - e.readyAt > STABLE_MS) e.state.restarts = 0;
    e.readyAt = undefined;
    if (e.state.restarts >= this.maxRestarts) {
      this.set(e, { phase: 'failed', why: `${reason}; gave up after ${e.state.restarts} restarts` });
      return;
    }
    const delay = (this.deployment.backoffMs ?? 500) * 2 ** e.state.restarts;
    this.set(e, { phase: 'restarting', why: reason, restarts: e.state.restarts + 1 });
    e.timer = setTimeout(() => {
      e.timer = undefined;
      void this.start(e);
    }, delay);
    e.timer.unref?.();
  }

  private async stop(e: Entry): Promise<void> {
    e.generation++;
    e.leftOut = undefined;
    if (e.timer) clearTimeout(e.timer);
    e.timer = undefined;
    for (const t of e.tools.values()) t.unregister();
    e.tools.clear();
    const conn = e.conn;
    e.conn = undefined;
    e.state = { ...e.state, phase: 'stopped', toolCount: 0 };
    await conn?.close();
  }

  /**
   * List the server's tools (its first listing, or a `notifications/tools/list_changed`): one
   * listing at a time per server; notices that arrive meanwhile cost one more listing after it,
   * so a server that floods notices is listed at most twice for the flood.
   */
  private relist(e: Entry, gen: number): Promise<void> {
    const under = e.listing;
    if (under?.gen === gen) {
      under.again = true;
      return under.done;
    }
    // (A listing of an older start may still be under way: it ends on its own, this start lists anew.)
    const run: NonNullable<Entry['listing']> = { gen, again: false, done: Promise.resolve() };
    run.done = (async () => {
      do {
        run.again = false;
        await this.refreshTools(e, gen);
      } while (run.again && e.generation === gen);
    })().finally(() => {
      if (e.listing === run) e.listing = undefined;
    });
    e.listing = run;
    return run.done;
  }

  /** Register what is new in a listing, drop what is gone; bounded in count and size (`offerable`). */
  private async refreshTools(e: Entry, gen: number): Promise<void> {
    const conn = e.conn;
    if (!conn) return;
    let listing: ToolListing;
    try {
      listing = await conn.listTools(this.deployment.startTimeoutMs ?? 30_000);
    } catch (err) {
      if (e.generation !== gen) return;
      // The tools it offered stay (a listing that fails once is no reason to take them away); the state says why.
      e.leftOut = this.say(e, clip(`its tool list could not be read: ${describeError(err)}`, 400));
      this.set(e, e.state.phase === 'ready' ? { why: e.leftOut } : {});
      return;
    }
    if (e.generation !== gen) return;
    const notes = syncTools(e.config.name, listing, e.secrets, e.tools, {
      heldElsewhere: (name) => this.heldElsewhere(e, name),
      register: (name, def) => this.deps.tools.register(mcpTool(e.config.name, name, def, this.port)),
    });
    e.leftOut = notes.length > 0 ? this.say(e, clip(notes.join('; '), 400)) : undefined;
    this.set(e, e.state.phase === 'ready' ? { toolCount: e.tools.size, why: e.leftOut } : { toolCount: e.tools.size });
  }

  /** True when `name` is registered by another server, or is a tool that is not this server's. */
  private heldElsewhere(e: Entry, name: string): boolean {
    for (const other of this.entries.values()) if (other !== e && other.tools.has(name)) return true;
    return this.deps.tools.view().some((t) => t.name === name);
  }

  private readonly port = {
    preAllowed: (server: string, toolName: string) => (this.deployment.allowTools ?? []).some((a) => allowCovers(a, server, toolName)),
    call: (server: string, name: string, def: McpToolDef, args: Record<string, unknown>, ctx: ToolContext) => this.call(server, name, def, args, ctx),
  };

  private async call(server: string, name: string, def: McpToolDef, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const e = this.entries.get(server);
    if (!e) return fail('UNKNOWN_TOOL', `${name}: MCP server "${server}" is no longer configured.`);
    const conn = e.conn;
    if (!conn || e.state.phase !== 'ready') return fail('IO_ERROR', notReadyMessage(name, e.state, this.maxRestarts));
    try {
      const progress = ctx.progress;
      const r = await conn.callTool(def.name, args, ctx.signal, progress ? (text) => progress(this.say(e, text)) : undefined);
      return mapResult(server, r, e.secrets);
    } catch (err) {
      if (ctx.signal.aborted) return fail('CANCELLED', `${name}: cancelled while MCP server "${server}" was working on it`);
      if (e.conn !== conn) return fail('IO_ERROR', notReadyMessage(name, e.state, this.maxRestarts));
      return fail('IO_ERROR', `${name}: MCP server "${server}" failed to answer: ${this.say(e, describeError(err))}`);
    }
  }

  /** A text about a server as it may be shown: its secrets redacted. */
  private say(e: Entry, text: string): string {
    return redact(text, e.secrets);
  }

  private set(e: Entry, patch: Partial<McpServerState>): void {
    const next: McpServerState = { ...e.state, ...patch };
    // A field patched to undefined is gone (no `why: undefined` in a state a host serialises).
    for (const k of Object.keys(patch) as (keyof McpServerState)[]) if (patch[k] === undefined) delete next[k];
    e.state = next;
    this.changed();
  }

  private changed(): void {
    if (this.closed) return;
    for (const fn of [...this.listeners]) {
      try {
        fn();
      } catch {
        // a listener's failure is its own
      }
    }
  }
}
