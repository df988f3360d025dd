import assert from 'node:assert/strict';
import type { SubagentRuntime } from '../../../src/core/subagent/runtime';
import { SubagentError, type SubagentProvider, type SubagentRequest } from '../../../src/core/subagent/types';
import { Script, subagentWorld } from './helpers';

/** A remote-style provider: declares no start capabilities; counts how often it was asked to prepare. */
function bareProvider(): SubagentProvider & { prepared: number } {
  const p = {
    name: 'bare',
    capabilities: { outputSchema: false, depthLimit: false, toolFilter: false, persona: false },
    inheritsParentContext: false,
    prepared: 0,
    prepare() {
      p.prepared++;
      return {};
    },
  };
  return p;
}

describe('subagent: capability gating and request checks, in order, before anything is created', () => {
  let rt: SubagentRuntime;
  let bare: ReturnType<typeof bareProvider>;
  const w = subagentWorld({}, { gates: false });
  beforeEach(() => {
    bare = bareProvider();
    // The harness's runtime, with a provider that declares no capabilities added to it.
    rt = w.t.h.subagents;
    rt.registerProvider(bare);
  });

  /** Start both ways; both must fail with `code` and leave the store, residency and registry as they were. */
  async function refused(provider: string, request: SubagentRequest, code: string): Promise<void> {
    const before = w.t.h.store
      .list()
      .map((h) => h.id)
      .sort();
    const resident = w.t.h.residentCount;
    const tools = w.t.h.tools.view({}).map((x) => x.name);
    for (const start of [() => rt.start(w.root, provider, request), () => rt.startContinuable(w.root, provider, request)]) {
      await assert.rejects(start(), (err: unknown) => {
        assert.ok(err instanceof SubagentError, `a SubagentError, got ${String(err)}`);
        assert.equal(err.code, code, err.message);
        return true;
      });
      assert.deepEqual(
        w.t.h.store
          .list()
          .map((h) => h.id)
          .sort(),
        before,
        'no session was created',
      );
      assert.equal(w.t.h.residentCount, resident, 'no agent became resident');
      assert.deepEqual(rt.stats(), { activations: 0, oneShots: 0, timers: 0, background: 0 });
      assert.deepEqual(
        w.t.h.tools.view({}).map((x) => x.name),
        tools,
      );
      assert.equal(w.root.session.length, 0, 'nothing was written to the parent');
    }
    assert.equal(bare.prepared, 0, 'the provider was never asked to prepare a seed');
  }

  it('an unknown provider is UNKNOWN_PROVIDER, before any other check', async () => {
    await refused('nope', { prompt: 'x' }, 'UNKNOWN_PROVIDER');
    await refused('nope', { prompt: 'x', maxDepth: -1, outputSchema: { type: 'string' } }, 'UNKNOWN_PROVIDER');
  });

  for (const field of ['outputSchema', 'maxDepth', 'toolFilter', 'persona'] as const) {
    it(`a provider without the ${field} capability refuses it with UNSUPPORTED_CAPABILITY`, async () => {
      const good: SubagentRequest = { prompt: 'x', outputSchema: { type: 'object' }, maxDepth: 2, toolFilter: ['read_file'], persona: { text: 'p' } };
      await refused('bare', { prompt: 'x', [field]: good[field] }, 'UNSUPPORTED_CAPABILITY');
    });
  }

  it('UNSUPPORTED_CAPABILITY comes before a bad maxDepth or a bad schema', async () => {
    await refused('bare', { prompt: 'x', maxDepth: -1 }, 'UNSUPPORTED_CAPABILITY');
    await refused('bare', { prompt: 'x', toolFilter: ['read_file'], maxDepth: 1.5 }, 'UNSUPPORTED_CAPABILITY');
    await refused('bare', { prompt: 'x', persona: { text: 'p' }, outputSchema: { type: 'string' } }, 'UNSUPPORTED_CAPABILITY');
  });

  for (const bad of [-1, 1.5, '2', Number.NaN, Infinity] as unknown[]) {
    it(`maxDepth ${typeof bad === 'string' ? JSON.stringify(bad) : String(bad)} is BAD_MAX_DEPTH`, async () => {
      await refused('spawn', { prompt: 'x', maxDepth: bad as number }, 'BAD_MAX_DEPTH');
    });
  }

  it('BAD_MAX_DEPTH comes before BAD_OUTPUT_SCHEMA', async () => {
    await refused('spawn', { prompt: 'x', maxDepth: -1, outputSchema: { type: 'string' } }, 'BAD_MAX_DEPTH');
  });

  for (const schema of [{ type: 'string' }, { properties: {} }, [], null, { type: 'object', properties: [] }, { type: 'object', required: [1] }] as unknown[]) {
    it(`outputSchema ${JSON.stringify(schema)} is BAD_OUTPUT_SCHEMA`, async () => {
      await refused('spawn', { prompt: 'x', outputSchema: schema as SubagentRequest['outputSchema'] }, 'BAD_OUTPUT_SCHEMA');
    });
  }

  it('the bare provider still starts a child when the request uses no capability', async () => {
    const run = await rt.start(w.root, 'bare', { prompt: 'plain task' });
    const r = await run.result;
    assert.equal(r.stopReason, 'completed');
    assert.equal(bare.prepared, 1);
    assert.ok(w.t.h.store.has(run.id));
    await run.dispose();
    assert.deepEqual(rt.stats(), { activations: 0, oneShots: 0, timers: 0, background: 0 });
  });

  it('the same checks reach the model through the subagent tool as a SUBAGENT error result', async () => {
    const script = new Script(w.server);
    script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: 'x', outputSchema: { type: 'array' } } }] }, { text: 'gave up' });
    const before = w.t.h.store.list().length;
    await w.root.accept('[[root]] delegate');
    await w.t.h.settle();
    const result = w.root.session.events.find((e) => e.type === 'tool/result');
    assert.ok(result && result.type === 'tool/result' && result.isError);
    assert.match(result.content, /BAD_OUTPUT_SCHEMA/);
    assert.equal(w.t.h.store.list().length, before);
  });
});
