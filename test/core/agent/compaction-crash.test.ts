// A compaction the user asked for, cut by kill -9 while its summary request ran (recovery,
// amended in s49). It runs outside a turn, and recovery closed only open turns: the log was left
// with a compaction that never ended, and the request's prompt (the whole history) uncounted by
// any budget. Now the next open ends it `aborted`, counting the request's prompt from the bytes
// its start recorded, estimated, and the conversation works on.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { makeHarness } from '../../support/harness';
import { ModelServer } from '../../support/model-server';
import { ofType } from '../subagent/helpers';

describe('agent: a compaction cut by a crash', () => {
  let server: ModelServer;
  let base: string;
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(() => (base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-compaction-crash-')))));
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  it('the next open ends it aborted with its prompt counted (estimated); the conversation compacts and runs again', async () => {
    const ws = path.join(base, 'ws');
    fs.mkdirSync(ws);
    const storeDir = path.join(base, 'store');
    server.reset();
    server.enqueue({ text: 'the first answer' }, { text: 'the second answer' }, { text: 'never finished', fault: { kind: 'stall', afterChunks: 1 } });
    const host = spawn(process.execPath, [path.join(__dirname, '..', '..', 'support', 'crash-compaction-host.js'), storeDir, ws, server.baseURL], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const gone = new Promise((r) => host.once('exit', r));
    const id = await new Promise<string>((resolve, reject) => {
      let out = '';
      host.stdout.on('data', (b: Buffer) => {
        out += b.toString();
        const m = /compacting (\S+)\n/.exec(out);
        if (m) resolve(m[1]);
      });
      host.once('exit', () => reject(new Error(`the host ended first: ${out}`)));
    });
    for (let i = 0; i < 3000 && server.requests.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(server.requests.length, 3, 'the summary request reached the model');
    host.kill('SIGKILL');
    await gone;

    const t = await makeHarness(server, { workspace: [ws], storeDir });
    try {
      const events = (await t.h.readSession(id)).events;
      const ends = ofType(events, 'compaction/end');
      assert.equal(ends.length, 1, 'the cut compaction is closed');
      assert.equal(ends[0].outcome, 'aborted');
      assert.equal(ends[0].estimated, true);
      assert.ok((ends[0].usage?.promptTokens ?? 0) > 0, `its prompt is counted: ${JSON.stringify(ends[0])}`);
      const summary = await t.h.store.summary(id);
      assert.ok(summary.tokens.prompt >= (ends[0].usage?.promptTokens ?? 0), 'the summary counts it');
      // It works on: a new compaction and a new turn.
      server.enqueue({ text: 'a summary' }, { text: 'the third answer' });
      const agent = await t.h.openSession(id);
      assert.equal((await agent.compact(1)).outcome, 'committed');
      await agent.accept('third');
      await t.h.settle();
      assert.match(ofType(agent.session.events, 'assistant/message').at(-1)?.text ?? '', /the third answer/);
    } finally {
      await t.h.close();
    }
  });
});
