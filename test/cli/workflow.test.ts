import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { arbor } from '../support/cli';
import { arborBin } from '../support/cli-bundle';
import { type ChatBody, ModelServer } from '../support/model-server';

const BIN = arborBin();
// The CLI runs its bundle (decision 0068), which forks the script process beside it.
const CHILD_ENTRY = path.join(path.dirname(BIN), '..', 'dist', 'workflow-child.js');
const SCRIPT =
  'phase("review"); const r = await parallel(args.files.map((f) => () => agent("WFTASK review " + f, { label: f }))); return { reviewed: r.length, r };';

const isChild = (b: ChatBody) => b.messages.some((m) => String(m.content ?? '').includes('WFTASK'));
const scriptProcesses = () =>
  execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(CHILD_ENTRY)).length;

// `arbor run` with a model that calls `workflow`: the script runs to the end in that process;
// after kill -9 mid-workflow the next open closes the run as interrupted and never re-runs it.
describe('cli: workflows under arbor run', () => {
  let server: ModelServer;
  let dir: string;
  let common: string[];
  let store: string;
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(() => {
    server.reset();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-wf-'));
    store = path.join(dir, 'store');
    fs.mkdirSync(path.join(dir, 'ws'));
    common = ['--store', store, '--workspace', path.join(dir, 'ws'), '--base-url', server.baseURL, '--model', 'test-model'];
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  function root(childReply: (b: ChatBody) => object, concurrency?: number) {
    server.setFallback((body) => {
      if (isChild(body)) return childReply(body);
      const last = body.messages[body.messages.length - 1];
      if (last.role === 'tool') return { text: `root read: ${String(last.content).slice(0, 60)}` };
      if (String(last.content).includes('what happened')) return { text: 'the workflow was interrupted' };
      return {
        toolCalls: [
          {
            name: 'workflow',
            arguments: {
              script: SCRIPT,
              meta: { name: 'review', description: 'review three files' },
              args: { files: ['a.ts', 'b.ts', 'c.ts'] },
              ...(concurrency ? { concurrency } : {}),
            },
          },
        ],
      };
    });
  }

  const logOf = async (id: string) =>
    (await arbor(['log', '--store', store, id])).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));

  it('runs the script to the end: three children, workflow/end completed, the result in the tool answer, exit 0', async () => {
    root(() => ({ text: 'looks fine' }));
    const r = await arbor(['run', ...common, 'review the files with a workflow']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /workflow wf-\w+: review/);
    assert.match(r.stderr, /workflow wf-\w+: completed/);
    const sessions = JSON.parse((await arbor(['sessions', '--json', '--store', store])).stdout) as { id: string; parentSession?: string }[];
    const top = sessions.find((s) => !s.parentSession)!;
    assert.equal(sessions.filter((s) => s.parentSession === top.id).length, 3);
    const log = await logOf(top.id);
    const end = log.find((e) => e.type === 'workflow/end');
    assert.equal(end.data.status, 'completed');
    assert.equal(end.data.agents, 3);
    const result = log.find((e) => e.type === 'tool/result');
    assert.equal(JSON.parse(result.content).result.reviewed, 3);
    assert.equal(scriptProcesses(), 0);
  });

  it('kill -9 mid-workflow: the next open closes the run as interrupted and runs nothing again', async () => {
    // Two at a time: the third child is made at its call and waits queued when the host dies.
    root(() => ({ text: 'slow '.repeat(400), chunkSize: 4, chunkDelayMs: 50 }), 2);
    const run = spawn(process.execPath, [BIN, 'run', ...common, '--json', 'review the files with a workflow'], {
      env: { ...process.env, ARBOR_API_KEY: '', DEEPSEEK_API_KEY: '', OPENAI_API_KEY: '', ARBOR_STORE: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise((r) => run.on('close', r));
    const deadline = Date.now() + 20_000;
    while (server.requests.filter((r) => isChild(r.body)).length < 2) {
      if (Date.now() > deadline) throw new Error('the children never asked the model');
      await new Promise((r) => setTimeout(r, 20));
    }
    run.kill('SIGKILL');
    await exited;
    const childRequests = server.requests.filter((r) => isChild(r.body)).length;
    // The script process died with its host (its orphan watchdog).
    for (let i = 0; i < 100 && scriptProcesses() > 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(scriptProcesses(), 0, 'no orphaned script process');

    const sessions = JSON.parse((await arbor(['sessions', '--json', '--store', store])).stdout) as { id: string; parentSession?: string }[];
    const top = sessions.find((s) => !s.parentSession)!;
    const next = await arbor(['send', ...common, top.id, 'what happened?']);
    assert.equal(next.code, 0, next.stderr);
    const log = await logOf(top.id);
    const ends = log.filter((e) => e.type === 'workflow/end');
    assert.equal(ends.length, 1);
    assert.equal(ends[0].data.status, 'interrupted');
    assert.match(ends[0].data.error, /not re-run/);
    assert.equal(log.filter((e) => e.type === 'workflow/start').length, 1, 'the run was not started again');
    // Every agent the crash left running has its done (interrupted), written before the end; the
    // one still queued (made, never started) has both (decision 0102): every child of the run.
    const agents = log.filter((e) => e.type === 'workflow/agent');
    const started = agents.filter((e) => e.data.status === 'started').map((e) => e.data.childId);
    const done = agents.filter((e) => e.data.status === 'done');
    const children = sessions.filter((s) => s.parentSession === top.id).map((s) => s.id);
    assert.equal(children.length, 3, 'all three children were made before the kill');
    assert.deepEqual([...started].sort(), [...children].sort(), 'each child of the run has its started');
    assert.deepEqual(done.map((e) => e.data.childId).sort(), [...started].sort());
    assert.equal(ends[0].data.agents, 3);
    assert.equal(childRequests, 2, 'the queued child never asked the model');
    assert.ok(done.every((e) => e.data.stopReason === 'interrupted' && e.seq < ends[0].seq));
    assert.equal(server.requests.filter((r) => isChild(r.body)).length, childRequests, 'no child asked the model again');
    const notices = log.filter((e) => e.type === 'user/message' && e.source.kind === 'subagent-settled');
    assert.equal(notices.length, 0, 'no per-child notices: the run’s end speaks for its children');
  });
});
