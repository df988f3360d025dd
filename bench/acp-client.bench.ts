// acp.client.vs_direct (issue 14): an ACP agent as a one-shot child through Arbor ÷ a bare SDK
// 2.4 client driving the same agent for the same prompt, both on the same loopback model server.
//
// The agent is the real codex-acp (@agentclientprotocol/codex-acp 2.6.0, bundled Codex, from
// .tools/acp-agents), pointed at the test model server (OpenAI Responses SSE) through a
// CODEX_HOME config.toml: its cost is its own real work (the Codex runtime starting, a session,
// a model request streamed back), not scripted sleeps.
//
// Through Arbor: `subagents.start(root, 'acp:codex', …)` → the child's result (its session and
// log, the agent spawned in its own group, initialize, session/new, session/set_mode from the
// mode table, session/prompt, the updates mapped into the log, the group gone). Directly: what a
// minimal client must do for the same one-shot job — spawn the agent in its own group with the
// same command, environment and cwd, `acp.client().connect(acp.ndJsonStream(…))`, initialize,
// session/new, session/set_mode to the same mode, session/prompt with the same text (the answer
// collected from the chunks), then end the agent the way acpx 0.19.1 does (stdin closed, up to
// 100 ms to leave by itself, then SIGTERM to its group) and wait until it has exited. Runs alternate so both halves see the same machine load; medians.
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk/unstable';
import { programEnv } from '../src/core/remote/process';
import type { AcpAgentSettings } from '../src/core/remote/settings';
import { remotePrompt } from '../src/core/remote/turn';
import { ACP_AGENTS, agentHome, codexLaunch, SANDBOX_MODE_IDS } from '../test/support/acp-agents';
import { makeHarness } from '../test/support/harness';
import { ModelServer } from '../test/support/model-server';
import { type BenchOptions, type Figure, type FigureSpec, fmt, median, missed, now, pairedRuns, timeProcess } from './support';

export const name = 'acp-client';

const VS_DIRECT: FigureSpec = { id: 'acp.client.vs_direct', op: '<=', target: 1.15 };
export const figures: readonly FigureSpec[] = [VS_DIRECT];

const CODEX_ACP = ACP_AGENTS.codex.entry;
const TASK = 'Answer in one sentence: what is a process group?';
const ANSWER = 'A process group is a set of processes that receive the same signals, so a whole program can be stopped at once.';

export async function run(opts: BenchOptions): Promise<Figure[]> {
  try {
    return [await vsDirect(opts)];
  } catch (err) {
    return [missed(VS_DIRECT, err instanceof Error ? err.message : String(err))];
  }
}

async function vsDirect(opts: BenchOptions): Promise<Figure> {
  if (!fs.existsSync(CODEX_ACP)) return missed(VS_DIRECT, `${CODEX_ACP} is not installed (the ACP agents in .tools/acp-agents)`);
  const server = await ModelServer.start();
  server.setFallback(() => ({ text: ANSWER }));
  // The tests' own launch (config.toml at the server, no plugins or analytics; HOME the bench's own).
  const home = agentHome('bench-codex-acp');
  const launch = codexLaunch(server, home);
  const agent: AcpAgentSettings = { name: 'codex', command: launch.command, args: launch.args, env: launch.env, modes: SANDBOX_MODE_IDS.codex };
  const t = await makeHarness(server, { remote: { acp: [agent] } });
  try {
    const root = await t.h.createSession();
    let prompt = TASK;
    const viaArbor = async (): Promise<number> => {
      const t0 = now();
      const run = await t.h.subagents.start(root, 'acp:codex', { prompt: TASK });
      const r = await run.result;
      const ms = now() - t0;
      if (r.stopReason !== 'completed') throw new Error(`the codex-acp child ended ${r.stopReason}: ${r.error ?? ''}`);
      // The direct run gets exactly what the agent was asked (the delegation notice, then the task).
      prompt = remotePrompt((await t.h.store.inspect(run.id)).events, TASK);
      await run.dispose();
      return ms;
    };
    const env = programEnv({ ...agent.env }, process.env);
    const direct = async (): Promise<number> => {
      const run = await timeProcess(launch.command, launch.args, {
        cwd: t.workspace,
        env,
        drive: (child, exited) => bareClient(child, exited, t.workspace, prompt, SANDBOX_MODE_IDS.codex['workspace-write']),
      });
      if (!run.value.includes(ANSWER.slice(0, 30))) throw new Error(`codex-acp driven directly answered ${JSON.stringify(run.value.slice(0, 120))}`);
      return run.ms;
    };
    const n = opts.quick ? 6 : 10;
    // A warm run of each first (the agent's files in the page cache, Codex's first-run state in its home);
    // then the halves alternate which goes first, so neither always follows the other's teardown.
    const [arbor, plain] = await pairedRuns(n, viaArbor, direct);
    const ratios = arbor.map((a, i) => a / plain[i]);
    opts.note(
      `acp client (codex-acp 2.6.0): through Arbor ${fmt(median(arbor))} ms vs a bare SDK client ${fmt(median(plain))} ms (medians of ${n}, alternating; per-pair ratios ${ratios.map(fmt).join(' ')})`,
    );
    return { ...VS_DIRECT, value: median(ratios) };
  } finally {
    await t.cleanup();
    await server.stop();
    fs.rmSync(home, { recursive: true, force: true });
  }
}

/** One prompt to the agent (spawned in its own group) with the SDK's client and nothing else; resolves with the answer once the agent is gone. */
async function bareClient(child: ChildProcessWithoutNullStreams, closed: Promise<void>, cwd: string, text: string, modeId: string): Promise<string> {
  child.stdin.on('error', () => undefined);
  let answer = '';
  const conn = acp
    .client({ name: 'bench' })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      const u = params.update;
      if (u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text') answer += u.content.text;
      return undefined;
    })
    .onRequest(acp.methods.client.session.requestPermission, async () => ({ outcome: { outcome: 'cancelled' } }))
    .connect(acp.ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>));
  try {
    const agent = conn.agent;
    await agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: 'bench', version: '1' },
    });
    const s = await agent.request(acp.methods.agent.session.new, { cwd: path.resolve(cwd), mcpServers: [] });
    if (s.modes?.currentModeId !== modeId) await agent.request(acp.methods.agent.session.setMode, { sessionId: s.sessionId, modeId });
    const r = await agent.request(acp.methods.agent.session.prompt, { sessionId: s.sessionId, prompt: [{ type: 'text', text }] });
    if (r.stopReason !== 'end_turn') throw new Error(`codex-acp driven directly stopped ${r.stopReason}`);
  } finally {
    // Ended as acpx 0.19.1 ends an agent: stdin closed, up to 100 ms to leave, then SIGTERM to its group.
    conn.close();
    child.stdin.end();
    let timer: NodeJS.Timeout | undefined;
    const left = await Promise.race([closed.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), 100)))]);
    clearTimeout(timer);
    if (!left) {
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // already gone
      }
      await closed;
    }
  }
  return answer;
}
