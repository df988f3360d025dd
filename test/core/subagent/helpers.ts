import type { Agent } from '../../../src/core/agent/agent';
import type { Harness, HarnessConfig } from '../../../src/core/harness';
import type { MessageSourceKind, SessionEvent } from '../../../src/core/session/events';
import { fromSessionOf } from '../../../src/core/session/message-source';
import { fail, ok } from '../../../src/core/tools/result';
import type { Tool } from '../../../src/core/tools/tool';
import { makeHarness, type TestHarness } from '../../support/harness';
import { type ChatBody, ModelServer, type Reply } from '../../support/model-server';

// Shared support for the subagent specs: a reply router that tells agents apart by a
// `[[tag]]` in their latest tagged user message (parent and children share one server),
// a `hold` tool that parks a turn until the test opens its gate, and the world each spec
// runs in (server, harness, script, gates, root session).

const TAG = /\[\[([\w.-]+)\]\]/;
const COMPACTION_SYSTEM = /^You compact a coding-agent conversation/;

export type Step = Reply | ((body: ChatBody) => Reply);

/** The tag of the agent a request belongs to: the last user message carrying `[[tag]]`. */
export function tagOf(body: ChatBody): string | undefined {
  if (COMPACTION_SYSTEM.test(String(body.messages[0]?.content ?? ''))) return 'compaction';
  for (let i = body.messages.length - 1; i >= 0; i--) {
    const m = body.messages[i];
    if (m.role !== 'user') continue;
    const hit = TAG.exec(String(m.content ?? ''));
    if (hit) return hit[1];
  }
  return undefined;
}

/** Per-agent reply queues keyed by tag; an empty queue answers `<tag> finished`. */
export class Script {
  private readonly queues = new Map<string, Step[]>();
  readonly log: { tag: string | undefined; body: ChatBody; index: number }[] = [];

  constructor(server: ModelServer) {
    server.setFallback((body, index) => this.reply(body, index));
  }

  on(tag: string, ...steps: Step[]): this {
    const q = this.queues.get(tag) ?? [];
    q.push(...steps);
    this.queues.set(tag, q);
    return this;
  }

  private reply(body: ChatBody, index: number): Reply {
    const tag = tagOf(body);
    this.log.push({ tag, body, index });
    const next = tag === undefined ? undefined : this.queues.get(tag)?.shift();
    if (next === undefined) return { text: tag === 'compaction' ? 'SUMMARY of the earlier work' : `${tag ?? 'untagged'} finished` };
    return typeof next === 'function' ? next(body) : next;
  }

  /** Bodies of the requests made for one tag, in order. */
  bodies(tag: string | undefined): ChatBody[] {
    return this.log.filter((l) => l.tag === tag).map((l) => l.body);
  }
  indexes(tag: string | undefined): number[] {
    return this.log.filter((l) => l.tag === tag).map((l) => l.index);
  }
}

/** `hold {key}`: a tool call that blocks until `release(key)` (or the turn is aborted). */
export class Gates {
  private readonly waiting = new Map<string, (() => void)[]>();
  private readonly open = new Set<string>();
  readonly reached: string[] = [];

  readonly tool: Tool = {
    name: 'hold',
    description: 'Test gate: waits until the test releases it.',
    parameters: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'], additionalProperties: false },
    execute: async (args, ctx) => {
      const key = String(args.key);
      this.reached.push(key);
      if (!this.open.has(key)) {
        await new Promise<void>((resolve) => {
          const list = this.waiting.get(key) ?? [];
          const done = () => {
            ctx.signal.removeEventListener('abort', done);
            const l = this.waiting.get(key);
            if (l) {
              const i = l.indexOf(done);
              if (i >= 0) l.splice(i, 1);
              if (l.length === 0) this.waiting.delete(key);
            }
            resolve();
          };
          list.push(done);
          this.waiting.set(key, list);
          ctx.signal.addEventListener('abort', done, { once: true });
        });
      }
      return ctx.signal.aborted ? fail('CANCELLED', `hold ${key}: cancelled`) : ok(`gate ${key} opened`);
    },
  };

  /** Register the tool globally in a harness. */
  install(h: Harness): this {
    h.tools.register(this.tool);
    return this;
  }
  isHeld(key: string): boolean {
    return (this.waiting.get(key)?.length ?? 0) > 0;
  }
  whenHeld(key: string): Promise<void> {
    return waitFor(() => this.isHeld(key), `gate ${key} to be reached`);
  }
  release(key: string): void {
    this.open.add(key);
    for (const fn of [...(this.waiting.get(key) ?? [])]) fn();
  }
  releaseAll(): void {
    for (const key of [...this.waiting.keys()]) this.release(key);
  }
}

export const hold = (key: string) => ({ name: 'hold', arguments: { key } });

/** What a spec's tests see of `subagentWorld`: read through getters, so each test gets its own. */
export interface SubagentWorld {
  readonly server: ModelServer;
  readonly t: TestHarness;
  readonly script: Script;
  /** Not set up with `gates: false`. */
  readonly gates: Gates;
  readonly root: Agent;
  /** A fresh world for this test (harness config `more` over the world's): what a `perTest` spec's tests call first. */
  setup(more?: Partial<HarnessConfig>): Promise<void>;
}

export interface SubagentWorldOptions {
  /** Install the `hold` gate tool in each harness and open every gate after each test (default true). */
  gates?: boolean;
  /** Each test calls `setup()` itself, for harness config of its own; else a beforeEach does it. */
  perTest?: boolean;
  /** After each test: run once the gates are open, before the harness is cleaned up. */
  beforeCleanup?: () => unknown;
}

/**
 * Registers the mocha hooks of a subagent spec in the calling describe: one model server
 * for the suite; per test, a reset server with a `Script` on it, a harness (release delay
 * 5 ms, then `overrides`), the gates and a root session; after each test, the gates opened
 * and the harness cleaned up.
 */
export function subagentWorld(overrides: Partial<HarnessConfig> = {}, opts: SubagentWorldOptions = {}): SubagentWorld {
  const withGates = opts.gates ?? true;
  let server: ModelServer;
  let t: TestHarness;
  let script: Script;
  let gates: Gates;
  let root: Agent;
  const setup = async (more: Partial<HarnessConfig> = {}): Promise<void> => {
    server.reset();
    script = new Script(server);
    t = await makeHarness(server, { releaseDelayMs: 5, ...overrides, ...more });
    if (withGates) gates = new Gates().install(t.h);
    root = await t.h.createSession();
  };
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  if (!opts.perTest) beforeEach(() => setup());
  afterEach(async () => {
    try {
      if (withGates) gates.releaseAll();
      await opts.beforeCleanup?.();
    } finally {
      await t.cleanup();
    }
  });
  return {
    get server() {
      return server;
    },
    get t() {
      return t;
    },
    get script() {
      return script;
    },
    get gates() {
      return gates;
    },
    get root() {
      return root;
    },
    setup,
  };
}

/** What every world built on a `SubagentWorld` shows of it: its server, harness, script and root, read through (each test gets its own). */
export type WorldParts = Pick<SubagentWorld, 'server' | 't' | 'script' | 'root'>;

/** `world`'s parts read through live, with `more`'s own properties beside them (its getters stay getters). */
export function withWorldParts<M extends object>(world: SubagentWorld, more: M): WorldParts & M {
  const parts: WorldParts = {
    get server() {
      return world.server;
    },
    get t() {
      return world.t;
    },
    get script() {
      return world.script;
    },
    get root() {
      return world.root;
    },
  };
  return Object.defineProperties(parts, Object.getOwnPropertyDescriptors(more)) as WorldParts & M;
}

/** Poll a condition (no timing assertion: only a generous ceiling against hangs). */
export async function waitFor(pred: () => boolean, what = 'condition', ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** The events of a session: the resident agent's, else what the store holds. */
export async function eventsOf(h: Harness, id: string): Promise<SessionEvent[]> {
  return [...(h.resident(id)?.session.events ?? (await h.store.readEvents(id)))];
}

export function ofType<T extends SessionEvent['type']>(evs: readonly SessionEvent[], type: T): Extract<SessionEvent, { type: T }>[] {
  return evs.filter((e): e is Extract<SessionEvent, { type: T }> => e.type === type);
}

/** Runtime-delivered messages (inbox or quiet) of one kind, optionally from one session. */
export function delivered(evs: readonly SessionEvent[], kind: MessageSourceKind, from?: string): SessionEvent[] {
  return evs.filter(
    (e) =>
      (e.type === 'inbox/accepted' || (e.type === 'user/message' && e.messageId === undefined)) &&
      e.source.kind === kind &&
      (from === undefined || fromSessionOf(e.source) === from),
  );
}

export const toolNames = (body: ChatBody): string[] => ((body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
export const systemOf = (body: ChatBody): string => String(body.messages[0]?.content ?? '');
export const contents = (body: ChatBody): string[] => body.messages.map((m) => String(m.content ?? ''));

/** The JSON a tool answered with (last tool message of a request body). */
export function lastToolJson<T = Record<string, unknown>>(body: ChatBody): T {
  for (let i = body.messages.length - 1; i >= 0; i--) {
    const m = body.messages[i];
    if (m.role === 'tool') return JSON.parse(String(m.content)) as T;
  }
  throw new Error('no tool message in the request');
}

export function stopReasons(evs: readonly SessionEvent[]): string[] {
  return ofType(evs, 'turn/end').map((e) => e.stopReason);
}

/** Wait until an agent's log holds `n` turn/end events. */
export function turnsEnded(agent: Agent, n: number): Promise<void> {
  return waitFor(() => ofType(agent.session.events, 'turn/end').length >= n, `${n} turn(s) of ${agent.id} to end`);
}

export function assertCode(code: string) {
  return (err: unknown): boolean => {
    if (!(err instanceof Error) || (err as { code?: string }).code !== code)
      throw new Error(`expected code ${code}, got ${err instanceof Error ? `${(err as { code?: string }).code}: ${err.message}` : String(err)}`);
    return true;
  };
}
