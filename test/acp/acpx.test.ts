import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Script } from '../core/subagent/helpers';
import { type CliRun, cliWorld, runProcess } from '../support/cli';
import { arborBin } from '../support/cli-bundle';
import { until } from '../support/harness';
import { repoRoot } from '../support/repo-root';

// `arbor acp` driven by a third-party ACP client: acpx (pinned; installed into .tools/acp by
// `npm run setup:acp`, which `npm test` runs). Its `--format json` prints the raw JSON-RPC
// traffic in both directions, one message a line.

const ACPX = path.join(repoRoot(), '.tools', 'acp', 'node_modules', 'acpx', 'dist', 'cli.js');
const BIN = arborBin();
const ACPX_VERSION = '0.19.1';

interface Msg {
  id?: number;
  method?: string;
  params?: {
    sessionId?: string;
    update?: { sessionUpdate: string; sessionId?: string; toolCallId?: string; status?: string };
    toolCall?: { title?: string };
    options?: { kind: string }[];
  };
  result?: { stopReason?: string; outcome?: { optionId?: string } };
}

describe('acp: arbor acp driven by acpx (a third-party ACP client)', () => {
  const w = cliWorld('arbor-acpx-', { realDir: true });
  const home = () => path.join(w.dir, 'home');
  const agentCmd = (extra: string[] = []) => [process.execPath, BIN, 'acp', ...w.common, ...extra].join(' ');
  const acpx = async (args: string[], timeoutMs = 30_000): Promise<CliRun> => {
    if (!fs.existsSync(ACPX)) throw new Error(`acpx is not installed at ${ACPX}; run 'npm run setup:acp'`);
    return runProcess(process.execPath, [ACPX, ...args], { cwd: w.ws, env: { ...process.env, HOME: home(), ARBOR_API_KEY: '' }, timeoutMs });
  };
  const messages = (r: CliRun): Msg[] =>
    r.stdout
      .trim()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => {
        const m = JSON.parse(l) as Msg & { jsonrpc?: string };
        assert.equal(m.jsonrpc, '2.0', l);
        return m;
      });
  /** Our processes still running for this test (the acpx queue owner and its agent), by their HOME. */
  const leftovers = (): number[] => {
    const out: number[] = [];
    for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
      try {
        if (fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`HOME=${home()}`)) out.push(Number(pid));
      } catch {
        // gone, or not ours to read
      }
    }
    return out;
  };
  beforeEach(() => fs.mkdirSync(home()));
  afterEach(async () => {
    // Until none is left (bounded): one may be starting another as it is killed, and the folder is
    // removed next (ENOTEMPTY while one still writes there).
    for (let i = 0; i < 50; i++) {
      const left = leftovers();
      if (left.length === 0) return;
      for (const pid of left) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  it(`is acpx ${ACPX_VERSION}; exec returns the answer, and every line of the traffic is JSON-RPC`, async () => {
    assert.equal((await acpx(['--version'])).stdout.trim(), ACPX_VERSION);
    w.server.enqueue({ text: 'Hello through ACP.' });
    const quiet = await acpx(['--agent', agentCmd(), '--cwd', w.ws, '--format', 'quiet', 'exec', 'say hello']);
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.equal(quiet.stdout.trim(), 'Hello through ACP.');
    w.server.enqueue({ text: 'Again.' });
    const json = messages(await acpx(['--agent', agentCmd(), '--cwd', w.ws, '--format', 'json', 'exec', 'again']));
    // The answer carries the turn's usage (decision 0074: a placed node's budget counts it), as the model server served it.
    const answer = json.find((m) => m.id === 2 && m.result)?.result as {
      stopReason: string;
      usage?: { inputTokens: number; outputTokens: number; totalTokens: number };
    };
    assert.equal(answer?.stopReason, 'end_turn');
    assert.ok(answer.usage && answer.usage.inputTokens > 0 && answer.usage.outputTokens > 0, JSON.stringify(answer));
    assert.equal(answer.usage.totalTokens, answer.usage.inputTokens + answer.usage.outputTokens);
  });

  it('a run_command outside the sandbox asks permission through ACP: --approve-all runs it, --deny-all does not', async () => {
    const outside = (file: string) => ({
      toolCalls: [{ name: 'run_command', arguments: { command: `echo hi > ${file}`, outsideSandbox: true, justification: 'test' } }],
    });
    w.server.enqueue(outside('yes.txt'), { text: 'ran' });
    const allowed = messages(await acpx(['--agent', agentCmd(), '--cwd', w.ws, '--format', 'json', '--approve-all', 'exec', 'run it']));
    const ask = allowed.find((m) => m.method === 'session/request_permission');
    assert.match(String(ask?.params?.toolCall?.title), /echo hi > yes\.txt/);
    assert.deepEqual(
      ask?.params?.options?.map((o) => o.kind),
      ['allow_once', 'reject_once'],
    );
    // acpx's answer (ids are per direction: the answer is the response that carries an outcome).
    assert.equal(allowed.find((m) => m.id === ask?.id && m.result?.outcome)?.result?.outcome?.optionId, 'allow_once');
    assert.ok(fs.existsSync(path.join(w.ws, 'yes.txt')));
    w.server.enqueue(outside('no.txt'), { text: 'refused' });
    const denied = messages(await acpx(['--agent', agentCmd(), '--cwd', w.ws, '--format', 'json', '--deny-all', 'exec', 'run it']));
    assert.ok(denied.some((m) => m.method === 'session/request_permission'));
    assert.equal(fs.existsSync(path.join(w.ws, 'no.txt')), false);
  });

  it('a persistent session: acpx cancel gives cancelled; the next prompt, in a new agent process, loads it with session/load and goes on with its history', async () => {
    const base = ['--agent', agentCmd(), '--cwd', w.ws, '--ttl', '1'];
    const created = await acpx([...base, 'sessions', 'new']);
    assert.equal(created.code, 0, created.stderr);
    const sessionId = created.stdout.trim().split('\n').at(-1)!;
    w.server.enqueue(
      { toolCalls: [{ id: 'c1', name: 'list_files', arguments: {} }] },
      { text: 'listed', chunkSize: 3, fault: { kind: 'stall', afterChunks: 1 } },
    );
    const running = acpx([...base, '--format', 'json', 'prompt', 'list and wait']);
    await until(() => w.server.requests.length === 2, 20_000);
    const cancel = await acpx([...base, 'cancel']);
    assert.equal(cancel.code, 0, cancel.stderr);
    const first = messages(await running);
    const prompt = first.find((m) => m.method === 'session/prompt')!;
    assert.equal(first.find((m) => m.id === prompt.id && m.result)?.result?.stopReason, 'cancelled');
    const live = first
      .filter((m) => m.method === 'session/update' && m.params?.update?.sessionUpdate !== 'agent_message_chunk')
      .map((m) => `${m.params!.update!.sessionUpdate}:${m.params!.update!.toolCallId}:${m.params!.update!.status}`);
    assert.deepEqual(live, ['tool_call:c1:in_progress', 'tool_call_update:c1:completed']);

    // The queue owner and its agent go after the ttl; the next prompt starts both again.
    await until(() => leftovers().length === 0, 20_000);
    w.server.enqueue({ text: 'back again' });
    const second = messages(await acpx([...base, '--format', 'json', 'prompt', 'continue']));
    const load = second.find((m) => m.method === 'session/load')!;
    assert.equal(load.params?.sessionId, sessionId);
    assert.ok(
      second.some((m) => m.id === load.id && m.result),
      'loaded',
    );
    // acpx hides a load's replayed updates (it keeps its own history); the replay's order is
    // checked with the SDK client in serve.test.ts. Here: the model sees the loaded history.
    const prompt2 = second.find((m) => m.method === 'session/prompt')!;
    assert.equal(second.find((m) => m.id === prompt2.id && m.result)?.result?.stopReason, 'end_turn');
    const history = w.server.requests.at(-1)!.body.messages.slice(1);
    assert.deepEqual(
      history.map((m) => m.role),
      ['user', 'assistant', 'tool', 'assistant', 'user'],
    );
    assert.equal(history[0].content, 'list and wait');
    assert.equal(history[4].content, 'continue');
  });

  it("a delegating prompt (arbor acp --subagents, as acpx does not advertise them): subagent_update announcements and the child's updates", async () => {
    const script = new Script(w.server);
    script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[kid]] count', label: 'counter' } }] }, { text: 'done' });
    script.on('kid', { text: 'one two three' });
    const out = messages(await acpx(['--agent', agentCmd(['--subagents']), '--cwd', w.ws, '--format', 'json', 'exec', '[[root]] delegate']));
    const root = out.find((m) => m.id === 1 && m.result) as { result: { sessionId: string } } | undefined;
    const subs = out.filter((m) => m.params?.update?.sessionUpdate === 'subagent_update');
    assert.ok(subs.length >= 2, 'announced, then its state changes');
    const kidId = subs[0].params!.update!.sessionId!;
    assert.equal(subs[0].params!.sessionId, root?.result.sessionId);
    assert.equal((subs[0].params!.update as { title?: string }).title, 'counter');
    const kidUpdates = out.filter((m) => m.method === 'session/update' && m.params?.sessionId === kidId).map((m) => m.params!.update!.sessionUpdate);
    assert.ok(kidUpdates.includes('agent_message_chunk'));
    assert.ok(out.indexOf(subs[0]) < out.findIndex((m) => m.params?.sessionId === kidId));
  });
});
