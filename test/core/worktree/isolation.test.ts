// A child in its own git worktree (decision 0060), with real git and the real bubblewrap: its
// base holds the parent's uncommitted work, the user's index/HEAD/files are untouched, and every
// way of writing the parent's checkout is refused — by the file tools and by the OS sandbox —
// while its worktree is writable to both.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sandboxStatus } from '../../../src/core/tools/sandbox/detect';
import { ofType } from '../subagent/helpers';
import { gitIn, placeOf, read, results, worktreeWorld } from './fixture';

const write = (p: string, content: string) => ({ toolCalls: [{ name: 'write_file', arguments: { path: p, content } }] });

describe('worktree isolation: the child writes only its worktree', () => {
  const w = worktreeWorld();

  before(async () => {
    const status = await sandboxStatus();
    if (!status.available) throw new Error(`These tests need bubblewrap, and ${status.reason}. Run "npm run setup:e2e" (it installs bubblewrap).`);
  });

  it('starts from the parent state (uncommitted and untracked included) without touching its index, HEAD or files', async () => {
    const before = {
      status: gitIn(w.ws, 'status', '--porcelain'),
      head: gitIn(w.ws, 'rev-parse', 'HEAD'),
      index: fs.readFileSync(path.join(w.ws, '.git', 'index')),
    };
    const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[c]] look', label: 'look', isolation: 'worktree' });
    await run.result;
    await run.dispose();
    const place = await placeOf(w, run.id);
    assert.equal(place.state, 'open');
    assert.equal(place.branch, `arbor/look-${run.id.split('.').pop()}`);
    assert.equal(place.path, path.join(w.ws, '.arbor', 'worktrees', run.id));
    assert.equal(read(path.join(place.root, 'a.txt')), 'one\ntwo\n');
    assert.equal(read(path.join(place.root, 'new.txt')), 'fresh\n');
    assert.equal(fs.existsSync(path.join(place.root, '.arbor', 'store')), false, 'the store is never copied into a worktree');
    assert.equal(gitIn(w.ws, 'status', '--porcelain'), before.status);
    assert.equal(gitIn(w.ws, 'rev-parse', 'HEAD'), before.head);
    assert.deepEqual(fs.readFileSync(path.join(w.ws, '.git', 'index')), before.index);
    assert.equal(gitIn(w.ws, 'rev-parse', 'HEAD'), gitIn(w.ws, 'rev-parse', `${place.base}^`), 'the base sits on the user HEAD');
    const desc = (await w.t.h.readSession(run.id)).events.find((e) => e.type === 'subagent/descriptor');
    assert.equal(desc?.type === 'subagent/descriptor' && desc.isolation, 'worktree');
  });

  it('refuses every write to the parent checkout (tools and OS sandbox) and lets it write its worktree', async () => {
    const parentFile = path.join(w.ws, 'a.txt');
    const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }] });
    w.script.on(
      'c',
      call('write_file', { path: parentFile, content: 'HACK abs\n' }),
      call('write_file', { path: '../../../a.txt', content: 'HACK dotdot\n' }),
      call('run_command', { command: `ln -s ${parentFile} link.txt && echo linked` }),
      call('write_file', { path: 'link.txt', content: 'HACK link\n' }),
      call('run_command', { command: `echo HACK > ${parentFile}` }),
      call('run_command', { command: 'echo HACK > link.txt' }),
      call('run_command', { command: `echo HACK > ${path.join(w.ws, 'planted.txt')}` }),
      call('write_file', { path: 'b.txt', content: 'by the tool\n' }),
      call('run_command', { command: 'echo by the command > c.txt' }),
      { text: 'done' },
    );
    const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[c]] try', isolation: 'worktree' });
    const r = await run.result;
    await run.dispose();
    assert.equal(r.stopReason, 'completed');
    const res = await results(w, run.id);
    const outcome = res.map((x) => `${x.name}:${x.isError ? 'refused' : 'ok'}`);
    assert.deepEqual(outcome, [
      'write_file:refused',
      'write_file:refused',
      'run_command:ok',
      'write_file:refused',
      'run_command:refused',
      'run_command:refused',
      'run_command:refused',
      'write_file:ok',
      'run_command:ok',
    ]);
    assert.match(res[4].content, /Read-only file system/);
    assert.equal(read(parentFile), 'one\ntwo\n', 'the parent file is unchanged');
    assert.equal(fs.existsSync(path.join(w.ws, 'planted.txt')), false);
    const place = await placeOf(w, run.id);
    assert.equal(read(path.join(place.root, 'b.txt')), 'by the tool\n');
    assert.equal(read(path.join(place.root, 'c.txt')), 'by the command\n');
  });

  it('a child of a worktree child works in the same worktree (inherited, never wider)', async () => {
    w.script.on('c', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[g]] write', label: 'grand' } }] }, { text: 'c done' });
    w.script.on(
      'g',
      { toolCalls: [{ name: 'write_file', arguments: { path: path.join(w.ws, 'a.txt'), content: 'HACK\n' } }] },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'g.txt', content: 'grand\n' } }] },
      { text: 'g done' },
    );
    const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[c]] delegate', isolation: 'worktree' });
    await run.result;
    await w.t.h.settle();
    await run.dispose();
    const place = await placeOf(w, run.id);
    const grand = w.t.h.store.descendants(run.id)[0].id;
    const inherited = await placeOf(w, grand);
    assert.equal(inherited.state, 'inherited');
    assert.equal(inherited.owner, run.id);
    assert.equal(inherited.root, place.root);
    assert.deepEqual(
      (await results(w, grand)).map((x) => x.isError),
      [true, false],
    );
    assert.equal(read(path.join(place.root, 'g.txt')), 'grand\n');
    assert.equal(read(path.join(w.ws, 'a.txt')), 'one\ntwo\n');
    assert.deepEqual(
      (await w.t.h.worktrees.list()).map((l) => l.id),
      [run.id],
      'only the owner is a worktree child',
    );
  });

  it('subagent_fork takes isolation too: the fork works in its own worktree', async () => {
    w.script.on(
      'root',
      { text: 'first turn' },
      { toolCalls: [{ name: 'subagent_fork', arguments: { prompt: '[[fk]] write', label: 'fk', isolation: 'worktree' } }] },
      { text: 'root done' },
    );
    w.script.on('fk', write('forked.txt', 'fork\n'), { text: 'fork done' });
    await w.root.accept('[[root]] one');
    await w.t.h.settle();
    await w.root.accept('[[root]] two');
    await w.t.h.settle();
    const [fork] = w.t.h.store.descendants(w.root.id);
    assert.equal(fork.origin, 'fork');
    const place = await placeOf(w, fork.id);
    assert.equal(place.state, 'open');
    assert.equal(read(path.join(place.root, 'forked.txt')), 'fork\n');
    assert.equal(fs.existsSync(path.join(w.ws, 'forked.txt')), false);
  });

  it('a remote provider is refused isolation with what to do, and nothing is created', async () => {
    w.t.h.subagents.registerProvider({
      name: 'elsewhere',
      capabilities: { outputSchema: false, depthLimit: false, toolFilter: false, persona: false },
      inheritsParentContext: false,
      modes: ['one-shot'],
      prepare: () => ({}),
      remote: {} as never,
    });
    await assert.rejects(w.t.h.subagents.start(w.root, 'elsewhere', { prompt: 'x', isolation: 'worktree' }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'UNSUPPORTED_CAPABILITY');
      assert.match(err.message, /cannot be isolated in a worktree\. Leave isolation out/);
      return true;
    });
    assert.equal(w.t.h.store.descendants(w.root.id).length, 0);
    assert.equal(fs.existsSync(w.t.h.worktrees.dir), false, 'no worktree was made');
  });

  it('under full-access the worktree child is clamped to workspace-write: the parent checkout stays read-only to it', async () => {
    await w.t.h.setPolicy(w.root.id, { sandbox: 'full-access' });
    w.script.on(
      'c',
      write(path.join(w.ws, 'a.txt'), 'HACK\n'),
      { toolCalls: [{ name: 'run_command', arguments: { command: `echo HACK > ${path.join(w.ws, 'a.txt')}` } }] },
      { text: 'done' },
    );
    const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[c]] try', isolation: 'worktree' });
    await run.result;
    await run.dispose();
    const modes = ofType((await w.t.h.readSession(run.id)).events, 'sandbox/mode').map((e) => e.mode);
    assert.deepEqual(modes, ['workspace-write']);
    assert.deepEqual(
      (await results(w, run.id)).map((x) => x.isError),
      [true, true],
    );
    assert.equal(read(path.join(w.ws, 'a.txt')), 'one\ntwo\n');
  });

  it('refuses isolation outside a git repository, saying what to do, and creates nothing', async () => {
    fs.rmSync(path.join(w.ws, '.git'), { recursive: true, force: true });
    await assert.rejects(w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[c]] x', isolation: 'worktree' }), (err: Error) =>
      /not inside a git repository.*git init/.test(err.message),
    );
    assert.equal(w.t.h.store.descendants(w.root.id).length, 0);
  });

  it('a git add that fails after the base was made in-process: the start fails, nothing is listed, no folder stays', async () => {
    // Its base is made in-process; git's bookkeeping then cannot make its entry.
    fs.writeFileSync(path.join(w.ws, '.git', 'worktrees'), 'not a folder\n');
    await assert.rejects(w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[c]] x', isolation: 'worktree' }), /git worktree failed/);
    assert.equal(w.t.h.store.descendants(w.root.id).length, 0);
    const made = path.join(w.ws, '.arbor', 'worktrees');
    assert.deepEqual(fs.existsSync(made) ? fs.readdirSync(made) : [], []);
    // Once git can, the next child starts as usual.
    fs.rmSync(path.join(w.ws, '.git', 'worktrees'));
    w.script.on('c', { text: 'done' });
    const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[c]] y', isolation: 'worktree' });
    await run.result;
    await run.dispose();
    assert.equal((await placeOf(w, run.id)).state, 'open');
    assert.equal(w.t.h.store.descendants(w.root.id).length, 1);
  });
});
