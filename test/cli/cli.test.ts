import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ModelServer } from '../support/model-server';

const BIN = path.resolve(__dirname, '..', '..', '..', 'bin', 'arbor.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run the real CLI in a new process (as a user would), with no API key in the environment. */
function arbor(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const clean = { ...process.env, ARBOR_API_KEY: '', DEEPSEEK_API_KEY: '', OPENAI_API_KEY: '', ARBOR_STORE: '', ...env };
    const child = spawn(process.execPath, [BIN, ...args], { env: clean, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

describe('cli: arbor run / send / sessions / log in real processes', () => {
  let server: ModelServer;
  let dir: string;
  let ws: string;
  let store: string;
  let common: string[];
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(() => {
    server.reset();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-cli-'));
    ws = path.join(dir, 'ws');
    store = path.join(dir, 'store');
    fs.mkdirSync(ws);
    common = ['--store', store, '--workspace', ws, '--base-url', server.baseURL, '--model', 'test-model'];
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('prints help and exits 0; bad usage exits 2 with a hint', async () => {
    const help = await arbor(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /arbor run \[options\] PROMPT/);
    const bad = await arbor(['run', '--sandbox', 'everything', 'x']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--sandbox must be one of read-only, workspace-write, full-access/);
    assert.equal((await arbor(['frobnicate'])).code, 2);
    assert.equal((await arbor(['run'])).code, 2);
    const nokey = await arbor(['run', '--store', store, '--workspace', ws, '--base-url', 'https://api.example.com', 'x']);
    assert.equal(nokey.code, 2);
    assert.match(nokey.stderr, /No API key/);
  });

  it('runs a real multi-tool turn with --json: every event one JSON line, tagged with its session', async () => {
    fs.writeFileSync(path.join(ws, 'README.md'), '# Demo\nhello\n');
    server.enqueue(
      { toolCalls: [{ name: 'list_files', arguments: {} }, { name: 'read_file', arguments: { path: 'README.md' } }] },
      { toolCalls: [{ name: 'edit_file', arguments: { path: 'README.md', oldText: 'hello', newText: 'hello, world' } }] },
      { text: 'Edited README.md.' },
    );
    const r = await arbor(['run', ...common, '--json', 'greet the world in README.md']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { session: string; type: string; seq: number });
    const id = lines[0].session;
    assert.ok(lines.every((l) => l.session === id && typeof l.seq === 'number'));
    assert.deepEqual(lines.map((l) => l.seq), lines.map((_, i) => i));
    assert.equal(lines.filter((l) => l.type === 'tool/result').length, 3);
    assert.equal(lines[lines.length - 1].type, 'turn/end');
    assert.equal(fs.readFileSync(path.join(ws, 'README.md'), 'utf8'), '# Demo\nhello, world\n');

    const list = await arbor(['sessions', '--json', '--store', store]);
    assert.equal(list.code, 0);
    const sessions = JSON.parse(list.stdout) as { id: string; events: number; origin: string }[];
    assert.deepEqual(sessions.map((s) => [s.id, s.origin, s.events]), [[id, 'user', lines.length]]);

    const log = await arbor(['log', id, '--store', store]);
    assert.equal(log.code, 0);
    assert.deepEqual(log.stdout.trim().split('\n').map((l) => JSON.parse(l).type), lines.map((l) => l.type));
  });

  it('a new process continues an old session with send and the model sees the whole history', async () => {
    server.enqueue({ text: 'Noted: the code word is heron.' });
    const first = await arbor(['run', ...common, '--json', 'remember the code word heron']);
    assert.equal(first.code, 0, first.stderr);
    const id = JSON.parse(first.stdout.split('\n')[0]).session as string;
    server.enqueue({ text: 'The code word is heron.' });
    const second = await arbor(['send', ...common, id, 'what is the code word?']);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /The code word is heron\./);
    const msgs = server.requests[1].body.messages.slice(1).map((m) => `${m.role}:${m.content}`);
    assert.deepEqual(msgs, ['user:remember the code word heron', 'assistant:Noted: the code word is heron.', 'user:what is the code word?']);
    assert.equal((await arbor(['send', ...common, 'nope', 'hi'])).code, 2);
  });

  it('exits 1 when the turn fails, with the reason on stderr', async () => {
    server.enqueue({ fault: { kind: 'status', status: 401 } });
    const r = await arbor(['run', ...common, 'hello']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /refused the API key \(401\)/);
  });

  it('a read-only run cannot write: the denial reaches the model and nothing lands on disk', async () => {
    server.enqueue({ toolCalls: [{ name: 'write_file', arguments: { path: 'x.txt', content: 'no' } }] }, { text: 'I could not write.' });
    const r = await arbor(['run', ...common, '--sandbox', 'read-only', '--json', 'write x.txt']);
    assert.equal(r.code, 0, r.stderr);
    const res = r.stdout.trim().split('\n').map((l) => JSON.parse(l)).find((e) => e.type === 'tool/result');
    assert.equal(res.isError, true);
    assert.match(res.content, /read-only/);
    assert.equal(fs.existsSync(path.join(ws, 'x.txt')), false);
  });
});
