// remote.dsh.vs_direct: a dsh-sdk child (another Arbor, `arbor run --json` on its own store)
// from start to result through Arbor — the provider's launch, the line mapping into the child's
// session log through the shared sink, its turn frame — ÷ running the same `arbor run --json`
// directly on the same model server and prompt (spawn to exit, every line read). Median of 5
// each (3 in --quick), alternating (and in alternating order), after one warm run of each. The model server runs in a
// process of its own, as a model always does (see acp.bench.ts for why).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Harness } from '../src/core/harness';
import { namespaceArgs, pidNamespace } from '../src/core/remote/pid-namespace';
import { programEnv } from '../src/core/remote/process';
import { arborBin } from '../test/support/cli-bundle';
import { type BenchOptions, type Figure, type FigureSpec, fmt, median, modelProcess, now, pairedRuns, tempDir, timeProcess } from './support';

export const name = 'remote-dsh';

const VS_DIRECT: FigureSpec = { id: 'remote.dsh.vs_direct', op: '<=', target: 1.15 };
export const figures: readonly FigureSpec[] = [VS_DIRECT];

const ARBOR_JS = arborBin();
const REPLY = 'The answer, in a sentence of about forty tokens, streamed the way a model streams it. '.repeat(2);
const PROMPT = 'Answer in one sentence.';

/**
 * `arbor run --json` as a user would run it (not in a group of its own): spawn to exit, each
 * stdout line parsed as it arrives. Its environment is the one the dsh-sdk child gets (the
 * host's allow-listed variables, decision 0078, and the key): a variable such as
 * `NODE_EXTRA_CA_CERTS` (this machine sets it) costs every Node start ~40 ms, on both sides.
 */
async function direct(baseURL: string, store: string, ws: string): Promise<number> {
  const args = [ARBOR_JS, 'run', '--json', '--store', store, '--workspace', ws, '--sandbox', 'workspace-write', '--approval', 'never'];
  const r = await timeProcess(process.execPath, [...args, '--base-url', baseURL, '--model', 'bench', '--', PROMPT], {
    env: { ...programEnv(), ARBOR_API_KEY: 'local' },
    detached: false,
    output: 'drain',
    onLine: (line) => JSON.parse(line),
  });
  if (r.code !== 0) throw new Error(`arbor run exited ${r.code}`);
  return r.ms;
}

/** Spawn to exit of a program, in ms. */
async function startToExit(file: string, args: string[]): Promise<number> {
  return (await timeProcess(file, args, { output: 'ignore' })).ms;
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const model = await modelProcess(REPLY);
  const dir = tempDir('arbor-bench-dsh-');
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(ws);
  const h = await Harness.open({
    storeDir: path.join(dir, 'store'),
    workspace: [ws],
    model: { baseURL: model.baseURL, name: 'bench', apiKey: 'local', maxRetries: 0 },
    sandbox: 'workspace-write',
    approval: 'never',
    remote: { dshSdk: { command: ARBOR_JS, model: 'bench' } },
  });
  try {
    const root = await h.createSession();
    let n = 0;
    const viaArbor = async (): Promise<number> => {
      const t = now();
      const child = await h.subagents.start(root, 'dsh-sdk', { prompt: PROMPT });
      const r = await child.result;
      const ms = now() - t;
      await child.dispose();
      if (r.stopReason !== 'completed') throw new Error(`the dsh-sdk child ended ${r.stopReason}: ${r.error}`);
      return ms;
    };
    const straight = () => direct(model.baseURL, path.join(dir, `direct-${n++}`), ws);
    const runs = opts.quick ? 3 : 5;
    // A warm run of each first (the version probe, the modules in the page cache); the order alternates too.
    const [via, own] = await pairedRuns(runs, viaArbor, straight);
    opts.note(`dsh-sdk child ${fmt(median(via))} ms through Arbor vs ${fmt(median(own))} ms for arbor run --json directly (medians of ${runs})`);
    // What the difference is made of that no change of Arbor's removes: the child's own PID namespace (decision 0036).
    const ns = await pidNamespace();
    if (ns.available) {
      const plain: number[] = [];
      const wrapped: number[] = [];
      for (let i = 0; i < 7; i++) {
        plain.push(await startToExit('/bin/true', []));
        wrapped.push(await startToExit(ns.bwrap, [...namespaceArgs(), '/bin/true']));
      }
      opts.note(
        `of the ${fmt(median(via) - median(own))} ms between them, the PID namespace is ${fmt(median(wrapped) - median(plain))} ms (bwrap around /bin/true ${fmt(median(wrapped))} ms vs bare ${fmt(median(plain))} ms); the rest is the child's session and turn frame (durable appends), its lines mapped, its group reaped, and a machine shared with a second Node process`,
      );
    }
    return [{ ...VS_DIRECT, value: median(via) / median(own) }];
  } finally {
    await h.close();
    model.stop();
  }
}
