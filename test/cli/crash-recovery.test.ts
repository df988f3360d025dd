import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { arbor } from '../support/cli';
import { arborBin } from '../support/cli-bundle';
import { ModelServer } from '../support/model-server';

const BIN = arborBin();

// Recovery after a crash, for the whole tree: `arbor run` is killed (SIGKILL) while its
// continuable child streams. The next process reads the child as interrupted (never settled),
// closes its open turn as `interrupted`, and the parent gets exactly one settlement notice for
// it; nothing runs again by itself.
describe('cli: recovery after a crash (kill -9 while a child runs)', () => {
  let server: ModelServer;
  let dir: string;
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(() => {
    server.reset();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-crash-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('closes the open turns as interrupted and notifies the parent once', async () => {
    const ws = path.join(dir, 'ws');
    const store = path.join(dir, 'store');
    fs.mkdirSync(ws);
    const common = ['--store', store, '--workspace', ws, '--base-url', server.baseURL, '--model', 'test-model'];
    const isChild = (b: { messages: { content?: string | null }[] }) => b.messages.some((m) => String(m.content ?? '').includes('CHILDTASK'));
    server.setFallback((body) => {
      if (isChild(body)) return { text: 'working '.repeat(400), chunkSize: 4, chunkDelayMs: 50 }; // ~40 s of streaming
      const last = body.messages[body.messages.length - 1];
      if (last.role === 'tool') return { text: 'root started the child' };
      if (String(last.content ?? '').startsWith('[subagent')) return { text: 'root saw the notice' };
      if (String(last.content ?? '').includes('after the crash')) return { text: 'root answered the user' };
      return { toolCalls: [{ name: 'subagent', arguments: { prompt: 'CHILDTASK: analyse slowly', label: 'slow', mode: 'continuable' } }] };
    });
    const run = spawn(process.execPath, [BIN, 'run', ...common, '--json', 'start the slow child'], {
      env: { ...process.env, ARBOR_API_KEY: '', DEEPSEEK_API_KEY: '', OPENAI_API_KEY: '', ARBOR_STORE: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    run.stdout.on('data', (d) => (out += d));
    const exited = new Promise((r) => run.on('close', r));
    // Kill it once the child is streaming (its first delta reached the log? no: deltas are not
    // logged; its request/header is) — the child's turn is open.
    const deadline = Date.now() + 20_000;
    while (!server.requests.some((r) => isChild(r.body))) {
      if (Date.now() > deadline) throw new Error(`the child never asked the model:\n${out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, 300));
    run.kill('SIGKILL');
    await exited;

    const list = await arbor(['sessions', '--json', '--store', store]);
    assert.equal(list.code, 0, list.stderr);
    const sessions = JSON.parse(list.stdout) as { id: string; title?: string; parentSession?: string; status: string }[];
    const root = sessions.find((s) => !s.parentSession)!;
    const child = sessions.find((s) => s.parentSession === root.id)!;
    assert.ok(child, 'the child was created before the crash');
    assert.equal(child.status, 'interrupted', 'a turn left open reads interrupted, never settled');
    const childRequests = server.requests.filter((r) => isChild(r.body)).length;

    // The next process recovers the tree: the child's turn closed, one notice to the root.
    const next = await arbor(['send', ...common, root.id, 'hello after the crash']);
    assert.equal(next.code, 0, next.stderr);
    const again = await arbor(['send', ...common, root.id, 'and once more after the crash']);
    assert.equal(again.code, 0, again.stderr);
    const childLog = (await arbor(['log', '--store', store, child.id])).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const ends = childLog.filter((e) => e.type === 'turn/end');
    assert.deepEqual(
      ends.map((e) => e.stopReason),
      ['interrupted'],
    );
    assert.match(ends[0].error, /process ended during this turn/);
    const rootLog = (await arbor(['log', '--store', store, root.id])).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const notices = rootLog.filter((e) => e.type === 'user/message' && e.source.kind === 'subagent-settled' && e.source.fromSession === child.id);
    assert.equal(notices.length, 1, 'exactly one settlement notice for the interrupted child');
    assert.equal(notices[0].source.stopReason, 'interrupted');
    // Nothing re-ran by itself: the child asked the model no more; the root answered only the user.
    assert.equal(server.requests.filter((r) => isChild(r.body)).length, childRequests);
    const rootTexts = rootLog.filter((e) => e.type === 'assistant/message').map((e) => e.text);
    assert.deepEqual(rootTexts.slice(-2), ['root answered the user', 'root answered the user']);
    const after = JSON.parse((await arbor(['sessions', '--json', '--store', store])).stdout) as { id: string; status: string }[];
    assert.equal(after.find((s) => s.id === child.id)?.status, 'interrupted');
    assert.equal(after.find((s) => s.id === root.id)?.status, 'idle');
  });
});
