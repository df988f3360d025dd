// agent.prefix.cache_hit (issue 23): a workspace with an AGENTS.md (~6 KB, two levels) and a
// catalogue of eight agent files. Over a conversation's turns, a fork and a plain child, the
// share of the stable head (tool schemas + system prompt, which holds the instructions and the
// catalogue) the server's prefix cache served, for every request after the first:
// Σ min(hit, head) ÷ Σ head. The real test server's cache keys on the bytes, as providers do.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Harness } from '../src/core/harness';
import { OpenAICompatibleClient } from '../src/core/model/openai-client';
import { type ChatBody, ModelServer } from '../test/support/model-server';
import { type BenchOptions, type Figure, type FigureSpec, fmt, tempDir } from './support';

export const PREFIX_CACHE_HIT: FigureSpec = { id: 'agent.prefix.cache_hit', op: '>=', target: 0.95 };

/** Tokens (4 characters each, as the server counts) of the tool schemas and the system prompt. */
const headTokens = (body: ChatBody) => Math.ceil((JSON.stringify(body.tools ?? []).length + JSON.stringify(body.messages.slice(0, 1)).length) / 4);

export async function prefixCacheHit(opts: BenchOptions): Promise<Figure> {
  const server = await ModelServer.start();
  const dir = tempDir('arbor-bench-prefix-');
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(path.join(ws, '.arbor', 'agents'), { recursive: true });
  fs.writeFileSync(path.join(ws, 'AGENTS.md'), `# Rules\n${'Run npm test before you say you are done; keep each change small and named. '.repeat(60)}`);
  for (const n of ['reviewer', 'tester', 'docs', 'planner', 'refactorer', 'security', 'perf', 'release'])
    fs.writeFileSync(
      path.join(ws, '.arbor', 'agents', `${n}.md`),
      `---\nname: ${n}\ndescription: The ${n} of this project; ask it for ${n} work.\ntools: Read, Grep, Glob\n---\nYou are the ${n}.\n`,
    );
  const h = await Harness.open({
    storeDir: path.join(dir, 'store'),
    workspace: [ws],
    model: { client: new OpenAICompatibleClient({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 }), name: 'bench' },
    sandbox: 'workspace-write',
    approval: 'never',
  });
  try {
    server.setFallback(() => ({ text: 'done' }));
    server.reset();
    const root = await h.createSession();
    const turns = opts.quick ? 10 : 30;
    for (let i = 0; i < turns; i++) {
      await root.accept(`question ${i}`);
      await root.idle();
    }
    server.enqueue({ toolCalls: [{ id: 'f1', name: 'subagent_fork', arguments: { prompt: 'FORK-TASK' } }] }, { text: 'fork answer' }, { text: 'root done' });
    await root.accept('fork now');
    await h.settle();
    const run = await h.subagents.start(root, 'spawn', { prompt: 'SPAWN-TASK' });
    await run.result;
    await run.dispose();
    const after = server.requests.slice(1);
    let hit = 0;
    let head = 0;
    for (const r of after) {
      const t = headTokens(r.body);
      head += t;
      hit += Math.min(r.cacheHitTokens, t);
    }
    const system = String(server.requests[0].body.messages[0]?.content ?? '');
    opts.note(
      `prefix: ${after.length} requests after the first (turns, a fork, a spawned child); head ~${headTokens(server.requests[0].body)} tokens ` +
        `(system prompt ${system.length} chars with AGENTS.md and ${h.project.snapshot().agents.length} agents); cache served ${hit} of ${head} head tokens (${fmt(hit / head)})`,
    );
    return { ...PREFIX_CACHE_HIT, value: hit / head };
  } finally {
    await h.close();
    await server.stop();
  }
}
