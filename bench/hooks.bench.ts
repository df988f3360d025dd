// hooks.pre_tool.overhead: a turn whose one tool call passes a no-op PreToolUse hook ÷ (the same
// turn with no hook + the hook's process alone, spawned bare). The hook is `cat >/dev/null` (it
// reads its JSON input and says nothing); what the ratio holds down is what Arbor adds around
// it: matching, the JSON input, the process group, the verdict and the durable `hook/run` event.
// Blocks of each alternate so all three see the same machine load.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Harness } from '../src/core/harness';
import { OpenAICompatibleClient } from '../src/core/model/openai-client';
import { ModelServer } from '../test/support/model-server';
import { type BenchOptions, type Figure, type FigureSpec, fmt, median, now, tempDir, timeProcess } from './support';

export const name = 'hooks';

const OVERHEAD: FigureSpec = { id: 'hooks.pre_tool.overhead', op: '<=', target: 1.2 };
export const figures: readonly FigureSpec[] = [OVERHEAD];

const HOOK = 'cat >/dev/null';

/** The hook's process alone: `sh -c HOOK` with a JSON input of the same size on stdin, until it exits. */
async function bareHook(cwd: string, input: string): Promise<number> {
  return (await timeProcess('/bin/sh', ['-c', HOOK], { cwd, stdin: input, output: 'drain' })).ms;
}

async function open(dir: string, ws: string, server: ModelServer, hooked: boolean): Promise<Harness> {
  const client = new OpenAICompatibleClient({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 });
  return Harness.open({
    storeDir: path.join(dir, hooked ? 'store-hooked' : 'store-plain'),
    workspace: [ws],
    model: { client, name: 'bench' },
    sandbox: 'workspace-write',
    approval: 'never',
    hooks: { workspaceRoot: ws, userFile: path.join(dir, hooked ? 'hooks.json' : 'none.json'), trusted: () => true },
  });
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const server = await ModelServer.start();
  let step = 0;
  // Every odd request reads a file, every even one answers: one tool call per turn.
  server.setFallback(() => (step++ % 2 === 0 ? { toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] } : { text: 'done' }));
  const dir = tempDir('arbor-bench-hooks-');
  fs.mkdirSync(path.join(dir, 'ws'));
  const ws = fs.realpathSync(path.join(dir, 'ws'));
  fs.writeFileSync(path.join(ws, 'a.txt'), 'hello\n');
  fs.writeFileSync(path.join(dir, 'hooks.json'), JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Read', hooks: [{ type: 'command', command: HOOK }] }] } }));
  const plain = await open(dir, ws, server, false);
  const hooked = await open(dir, ws, server, true);
  const input = JSON.stringify({
    session_id: 's-x',
    cwd: ws,
    hook_event_name: 'PreToolUse',
    tool_name: 'Read',
    tool_input: { path: 'a.txt' },
    parent_id: null,
    depth: 0,
  });
  const blocks = opts.quick ? 3 : 6;
  const perBlock = 20;
  const plainMs: number[] = [];
  const hookedMs: number[] = [];
  const bareMs: number[] = [];
  const afterForkMs: number[] = [];
  try {
    const a = await plain.createSession();
    const b = await hooked.createSession();
    const turn = async (agent: typeof a, out: number[], i: number) => {
      const t0 = now();
      await agent.accept(`read ${i}`);
      await agent.idle();
      out.push(now() - t0);
    };
    for (let k = 0; k < blocks; k++) {
      for (let i = 0; i < perBlock; i++) await turn(a, plainMs, i);
      for (let i = 0; i < perBlock; i++) await turn(b, hookedMs, i);
      for (let i = 0; i < perBlock; i++) bareMs.push(await bareHook(ws, input));
      // The floor of a turn that spawns: the same plain turn right after a bare spawn (see the note below).
      for (let i = 0; i < perBlock; i++) {
        await bareHook(ws, input);
        await turn(a, afterForkMs, i);
      }
    }
    const ran = b.session.events.filter((e) => e.type === 'hook/run').length;
    if (ran !== blocks * perBlock) throw new Error(`the hook ran ${ran} times, not ${blocks * perBlock}`);
    const value = median(hookedMs) / (median(plainMs) + median(bareMs));
    opts.note(
      `turn with a no-op PreToolUse hook ${fmt(median(hookedMs))} ms vs turn ${fmt(median(plainMs))} ms + bare hook process ${fmt(median(bareMs))} ms (medians of ${hookedMs.length})`,
    );
    // A spawn forks this whole process: the fork write-protects its memory, and every page the
    // host writes afterwards faults once (costly on a virtual machine), so the rest of a turn
    // that ran a hook runs slower whatever Arbor does around the hook. Measured, not assumed.
    const floor = median(afterForkMs) + median(bareMs);
    opts.note(
      `hooks: the same plain turn right after a bare spawn takes ${fmt(median(afterForkMs))} ms (the fork's copy-on-write tax on the host's next writes); ` +
        `floor for a turn that spawns = that + the bare hook = ${fmt(floor)} ms; hooked turn ÷ floor ${fmt(median(hookedMs) / floor)} (what Arbor itself adds)`,
    );
    return [{ ...OVERHEAD, value }];
  } finally {
    await plain.close();
    await hooked.close();
    await server.stop();
  }
}
