// A way of Best of N run as an agent file never gets a wider sandbox than the conversation it
// was tried from: the file's sandbox only narrows (README: "sandbox: … narrows, never widens, the
// caller's"). Here the deployment is full-access, the user narrowed the conversation to
// read-only, and the agent file says workspace-write: the way must stay read-only (a review
// found it got workspace-write, and its command wrote).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { policyOverrides } from '../../../src/core/session/folds';
import { makeHarness, type TestHarness } from '../../support/harness';
import { ModelServer } from '../../support/model-server';

const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };

describe('Best of N with an agent file: the way never widens the conversation’s sandbox', function () {
  this.timeout(60_000);
  let server: ModelServer;
  let t: TestHarness;
  let base: string;
  before(async () => {
    server = await ModelServer.start();
  });
  after(() => server.stop());
  afterEach(async () => {
    await t?.cleanup();
    fs.rmSync(base, { recursive: true, force: true });
  });

  it('a read-only conversation’s way as a workspace-write agent stays read-only, and its command cannot write', async () => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-bestof-sandbox-')));
    const ws = path.join(base, 'ws');
    fs.mkdirSync(ws);
    const git = (...a: string[]) => execFileSync('git', a, { cwd: ws, env: GIT_ENV });
    git('init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(ws, 'a.txt'), 'one\n');
    git('add', '-A');
    git('commit', '-qm', 'first');
    fs.mkdirSync(path.join(ws, '.arbor', 'agents'), { recursive: true });
    fs.writeFileSync(path.join(ws, '.arbor', 'agents', 'helper.md'), '---\nname: helper\ndescription: helps\nsandbox: workspace-write\n---\nYou help.\n');
    t = await makeHarness(server, { workspace: [ws], storeDir: path.join(base, 'store'), sandbox: 'full-access', approval: 'never' });
    server.setFallback((body) => {
      const last = body.messages[body.messages.length - 1];
      if (last.role === 'tool') return { text: 'done' };
      if (body.messages.some((m) => String(m.content).includes('[[way]]')))
        return { toolCalls: [{ name: 'run_command', arguments: { command: 'echo written > proof.txt && echo WROTE' } }] };
      return { text: 'first answer' };
    });
    const root = await t.h.createSession();
    await t.h.setPolicy(root.id, { sandbox: 'read-only' });
    await root.accept('[[way]] do it', { kind: 'user' });
    await t.h.settle();
    const seq = root.session.events.find((e) => e.type === 'user/message')!.seq;
    const { ways } = await t.h.bestOf.start(root.id, seq, { ways: [{ agent: 'helper' }, {}] });
    await t.h.settle();
    for (const id of ways) {
      const s = await t.h.readSession(id);
      assert.equal(policyOverrides(s.events).sandbox?.value, 'read-only', `way ${id} (${s.header.agent?.name ?? 'no agent'}) runs read-only`);
      const results = s.events.flatMap((e) => (e.type === 'tool/result' ? [e.content] : []));
      assert.ok(results.length > 0, 'the way ran its command');
      for (const r of results) assert.ok(!r.includes('WROTE'), `the way's command wrote: ${r}`);
    }
  });
});
