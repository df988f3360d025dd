import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Harness } from '../../../src/core/harness';
import { ModelServer } from '../../support/model-server';
import { stopReasons } from '../subagent/helpers';

const WRITER = path.join(__dirname, '..', '..', 'support', 'budget-writer.js');

// Issue 15.3: a budget is an event in the log, so it holds after kill -9 and a reopen.
describe('cost: a budget survives kill -9', () => {
  let server: ModelServer;
  let dir: string;
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-budget-crash-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a process killed right after setting a budget leaves it in force at the next open', async () => {
    const storeDir = path.join(dir, 'store');
    const workspace = path.join(dir, 'ws');
    fs.mkdirSync(workspace);
    const child = spawn(process.execPath, [WRITER, storeDir, workspace, server.baseURL], { stdio: ['ignore', 'pipe', 'inherit'] });
    const id = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (b: Buffer) => {
        out += b.toString();
        const m = /budget (\S+)\n/.exec(out);
        if (m) resolve(m[1]);
      });
      child.on('exit', (code) => reject(new Error(`writer exited ${code} before setting the budget`)));
    });
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));

    const h = await Harness.open({
      storeDir,
      workspace: [workspace],
      model: { baseURL: server.baseURL, name: 'test-model', apiKey: 'test', maxRetries: 0, maxTokens: 64 },
      sandbox: 'read-only',
      approval: 'never',
    });
    try {
      assert.equal(h.store.closedCleanly, false, 'the writer never closed');
      assert.deepEqual((await h.store.summary(id)).budget, { maxTokens: 40 });
      const agent = await h.send(id, 'hello');
      await h.settle();
      assert.deepEqual(stopReasons(agent.session.events), ['budget']);
      assert.equal(server.requests.length, 0);
    } finally {
      await h.close();
    }
  });
});
