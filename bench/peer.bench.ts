// peer.oneshot.vs_codex, peer.oneshot.vs_claude: a one-turn prompt as a user runs it, whole
// process from spawn to exit, `arbor run --json` ÷ `codex exec --json` / `claude -p
// --output-format stream-json` — the pinned real programs from .tools/remote (`npm run
// setup:remote`), each with the command line and isolated home its provider uses
// (codexInvocation / claudeInvocation), all three on the same loopback model server answering
// the same text in the wire format each speaks. Every round runs the three, in rotating order;
// the figures are ratios of medians. A program that is not installed or fails is that figure's
// MISS with the reason.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { claudeInvocation } from '../src/core/remote/claude';
import { codexInvocation } from '../src/core/remote/codex';
import type { ProgramSettings } from '../src/core/remote/settings';
import { CLAUDE_BIN, CODEX_BIN, programHome, remoteSettings } from '../test/remote/world';
import { arborBin } from '../test/support/cli-bundle';
import { ModelServer } from '../test/support/model-server';
import { type BenchOptions, type Figure, type FigureSpec, fmt, lastLine, median, missed, type ProcessRun, tempDir, timeProcess } from './support';

export const name = 'peer';

const VS_CODEX: FigureSpec = { id: 'peer.oneshot.vs_codex', op: '<=', target: 1 };
const VS_CLAUDE: FigureSpec = { id: 'peer.oneshot.vs_claude', op: '<=', target: 1 };
export const figures: readonly FigureSpec[] = [VS_CODEX, VS_CLAUDE];

const TASK = 'Answer in one sentence: what is a process group?';
const ANSWER = 'A process group is a set of processes that receive the same signals, so a whole program can be stopped at once.';

interface Contender {
  label: string;
  spec?: FigureSpec;
  /** Why it cannot run here (not installed), or undefined. */
  absent?: string;
  /** Why it stopped running (a failed run), once it did. */
  failed?: string;
  once(): Promise<ProcessRun>;
  ms: number[];
  /** CPU time (user + system) of each measured run. */
  cpu: number[];
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const server = await ModelServer.start();
  server.setFallback(() => ({ text: ANSWER }));
  const homes = { codex: programHome('bench-peer-codex'), claude: programHome('bench-peer-claude') };
  const dir = tempDir('arbor-bench-peer-');
  const ws = path.join(dir, 'ws');
  const arborHome = path.join(dir, 'home');
  fs.mkdirSync(ws);
  fs.mkdirSync(arborHome);
  try {
    const settings = remoteSettings(server, homes);
    const bin = arborBin();
    let stores = 0;
    const program = (label: string, spec: FigureSpec, file: string, inv: { args: string[]; env: Record<string, string> }): Contender => ({
      label,
      spec,
      absent: fs.existsSync(file) ? undefined : `${file} is not installed (run npm run setup:remote)`,
      once: () => timeProcess(file, inv.args, { env: inv.env, cwd: ws, cpu: true }),
      ms: [],
      cpu: [],
    });
    const ctx = { cwd: ws, sandbox: 'workspace-write' as const, prompt: TASK };
    const contenders: Contender[] = [
      {
        label: 'arbor run',
        once: () =>
          timeProcess(
            process.execPath,
            [
              bin,
              'run',
              '--json',
              '--store',
              path.join(dir, `store-${stores++}`),
              '--workspace',
              ws,
              '--sandbox',
              'workspace-write',
              '--approval',
              'never',
            ].concat(['--base-url', server.baseURL, '--model', 'bench', '--', TASK]),
            { env: { PATH: process.env.PATH ?? '', HOME: arborHome, ARBOR_API_KEY: 'local' }, cwd: ws, cpu: true },
          ),
        ms: [],
        cpu: [],
      },
      program('codex exec', VS_CODEX, CODEX_BIN, codexInvocation(settings.codex as ProgramSettings, ctx)),
      // The floor of any Node program, in the same rounds: what Arbor cannot go below.
      {
        label: 'node -e 0',
        once: () => timeProcess(process.execPath, ['-e', `console.log(${JSON.stringify(ANSWER)})`], { env: {}, cwd: ws, cpu: true }),
        ms: [],
        cpu: [],
      },
      program('claude -p', VS_CLAUDE, CLAUDE_BIN, claudeInvocation(settings.claudeCode as ProgramSettings, ctx)),
    ];
    const arbor = contenders[0];
    const runOnce = async (c: Contender): Promise<void> => {
      if (c.absent || c.failed) return;
      const r = await c.once();
      if (r.code === 0 && r.stdout.includes(ANSWER.slice(0, 30))) {
        c.ms.push(r.ms);
        c.cpu.push(r.cpuMs ?? Number.NaN);
      } else c.failed = `${c.label} failed: ${lastLine(r)}`;
    };
    // Warm each: its files in the page cache, a program's first-run set-up in its home.
    for (const c of contenders) await runOnce(c);
    for (const c of contenders) c.ms.length = c.cpu.length = 0;
    const n = opts.quick ? 5 : 11;
    for (let i = 0; i < n; i++) for (let k = 0; k < contenders.length; k++) await runOnce(contenders[(i + k) % contenders.length]);
    opts.note(
      `one-turn prompt, spawn to exit (medians of ${n} rounds, rotating order): ${contenders
        .map((c) => `${c.label} ${c.ms.length ? `${fmt(median(c.ms))} ms (CPU ${fmt(median(c.cpu))} ms)` : (c.absent ?? c.failed)}`)
        .join(', ')}`,
    );
    opts.note(
      "arbor run = a Node start (node -e 0) + its modules initialised with Node's builtins (~45 ms) + sql.js instantiated and its first statements (~25 ms, Liftoff only: decision 0085) + the commands bundle from its V8 code cache (~15 ms) + the model round trip + 5 fsyncs waited for in turn (a new store's tree and catalog, the turn's start and end, the summaries; 0063, 0085); codex is one native binary writing nothing durable (--ephemeral). Floor: a Node program's start and those loads, about codex's CPU; on a loaded machine the fsyncs and the round trip stretch",
    );
    return contenders.flatMap((c) => {
      if (!c.spec) return [];
      const spec = c.spec;
      if (arbor.failed) return [missed(spec, arbor.failed)];
      if (c.absent || c.failed) return [missed(spec, (c.absent ?? c.failed) as string)];
      return [{ ...spec, value: median(arbor.ms) / median(c.ms) }];
    });
  } finally {
    await server.stop();
    fs.rmSync(homes.codex, { recursive: true, force: true });
    fs.rmSync(homes.claude, { recursive: true, force: true });
  }
}
