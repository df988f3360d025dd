// The demo's worktree scenes (issue 24) end to end with real git, on a copy of the sample
// workspace made a repository the way `npm start` makes it: "try two ways" (two worktree
// children rewrite the same file differently; one applies, the other then conflicts and is
// discarded), "two editors" (two in-place children each change a different file), and Best of N
// from the demo conversation.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEMO_EDITORS, DEMO_WAYS, demoReply } from '../../support/demo-script';
import { makeHarness, type TestHarness } from '../../support/harness';
import { ModelServer } from '../../support/model-server';
import { repoRoot } from '../../support/repo-root';
import { ensureSampleRepo } from '../../support/sample-repo';
import { gitIn, read } from '../worktree/fixture';

describe('demo: the worktree scenes on the sample workspace', () => {
  let server: ModelServer;
  let t: TestHarness;
  let base: string;
  let ws: string;
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(async () => {
    server.reset();
    server.setFallback((body) => ({ ...demoReply(body), chunkDelayMs: 0 }));
    base = fs.realpathSync(fs.mkdtempSync('/var/tmp/arbor-demo-wt-'));
    ws = path.join(base, 'sample-workspace');
    fs.cpSync(path.join(repoRoot(), 'media', 'sample-workspace'), ws, { recursive: true });
    assert.deepEqual(ensureSampleRepo(ws), { state: 'made' });
    t = await makeHarness(server, { workspace: [ws], storeDir: path.join(base, 'store'), releaseDelayMs: 5 });
  });
  afterEach(async () => {
    await t.cleanup();
    fs.rmSync(base, { recursive: true, force: true });
  });

  it('npm start makes the sample a repository once, with everything committed, and leaves an existing one alone', () => {
    assert.equal(gitIn(ws, 'status', '--porcelain'), '');
    assert.match(gitIn(ws, 'log', '--format=%s'), /^The Arbor demo sample workspace$/m);
    const head = gitIn(ws, 'rev-parse', 'HEAD');
    assert.deepEqual(ensureSampleRepo(ws), { state: 'existing' });
    assert.equal(gitIn(ws, 'rev-parse', 'HEAD'), head);
  });

  it('"try two ways": two worktree children rewrite src/greet.js differently; one applies, the other conflicts, then is discarded', async () => {
    const root = await t.h.createSession();
    await root.accept('try two ways', { kind: 'user' });
    await t.h.settle();
    const listed = await t.h.worktrees.list();
    const byLabel = Object.fromEntries(listed.map((l) => [l.label, l]));
    assert.deepEqual(Object.keys(byLabel).sort(), ['way-a', 'way-b']);
    const original = read(path.join(ws, 'src', 'greet.js'));
    assert.equal(read(path.join(byLabel['way-a'].path, 'src', 'greet.js')), DEMO_WAYS.a);
    assert.equal(read(path.join(byLabel['way-b'].path, 'src', 'greet.js')), DEMO_WAYS.b);
    assert.equal(read(path.join(ws, 'src', 'greet.js')), original, 'nothing reached the workspace before Apply');
    assert.match([...root.session.events].reverse().find((e) => e.type === 'assistant/message')?.text ?? '', /Both ways are done/);
    assert.deepEqual(await t.h.worktrees.apply(byLabel['way-a'].id), { applied: true, files: ['src/greet.js'] });
    assert.equal(read(path.join(ws, 'src', 'greet.js')), DEMO_WAYS.a);
    const second = await t.h.worktrees.apply(byLabel['way-b'].id);
    assert.equal(second.applied, false);
    assert.equal(read(path.join(ws, 'src', 'greet.js')), DEMO_WAYS.a, 'the conflict changed nothing');
    await t.h.worktrees.discard(byLabel['way-b'].id);
    assert.equal(fs.existsSync(byLabel['way-b'].path), false);
  });

  it('"two editors": two in-place children each change a different file of the workspace', async () => {
    const root = await t.h.createSession();
    await root.accept('two editors', { kind: 'user' });
    await t.h.settle();
    for (const f of Object.values(DEMO_EDITORS)) assert.equal(read(path.join(ws, f.path)), f.content, f.path);
    const children = t.h.store.children(root.session.header.id).map((h) => t.h.store.summaryRef(h.id)?.label);
    assert.deepEqual(children.sort(), ['readme-editor', 'test-editor']);
    assert.deepEqual(await t.h.worktrees.list(), [], 'in place: no worktrees');
  });

  it('Best of N from the demo conversation: two ways run "two editors", their children working in the way’s worktree', async () => {
    const root = await t.h.createSession();
    await root.accept('edit the settings', { kind: 'user' });
    await t.h.settle();
    const seq = root.session.events.find((e) => e.type === 'user/message')!.seq;
    const { group } = await t.h.bestOf.start(root.session.header.id, seq, { prompt: 'two editors', ways: [{}, {}] });
    await t.h.settle();
    const v = await t.h.bestOf.view(group);
    assert.equal(v.settled, true);
    for (const way of v.ways) {
      assert.equal(way.worktree, 'open');
      assert.deepEqual(way.files.map((f) => f.path).sort(), ['README.md', 'src/greet.test.js']);
      assert.match(way.outcome ?? '', /Both editors are done/);
    }
    assert.equal(read(path.join(ws, 'README.md')), fs.readFileSync(path.join(repoRoot(), 'media', 'sample-workspace', 'README.md'), 'utf8'));
  });
});
