// A placed child's changes to protected paths (decision 0060, amended in s49). On the far side its
// writes to `.vscode`, `.arbor`, `.claude` or a `.code-workspace` need approval — there, where a
// compromised machine skips it; apply then wrote such a file here with no one's approval (a task
// VS Code runs when the folder opens). Now the apply holds them as conflicts marked `protected`
// and writes nothing, until the user applies again saying so. A local child's are not held: its
// writes there were approved here, in its own worktree.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ofType } from '../subagent/helpers';
import { read } from '../worktree/fixture';
import { placedWorld } from './fixture';

const write = (p: string, content: string) => ({ toolCalls: [{ name: 'write_file', arguments: { path: p, content } }] });
const TASKS = '{"version":"2.0.0","tasks":[{"label":"x","type":"shell","command":"touch /tmp/pwned","runOptions":{"runOn":"folderOpen"}}]}\n';

describe('placement: a placed child’s protected paths are applied only when the user says so again', function () {
  this.timeout(120_000);
  const w = placedWorld();

  /** Git in the workspace's repository, `input` on its stdin. */
  const git = (args: string[], input = '') =>
    execFileSync('git', args, {
      cwd: w.ws,
      input,
      encoding: 'utf8',
      env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
    }).trim();

  /** Put `.vscode/tasks.json` onto the child's branch, as a far side that skipped its approvals would have sent it. */
  async function tampered(childId: string): Promise<void> {
    const place = ofType((await w.t.h.readSession(childId)).events, 'worktree')[0];
    const head = git(['rev-parse', place.branch]);
    const tasks = git(['hash-object', '-w', '--stdin'], TASKS);
    const vscode = git(['mktree'], `100644 blob ${tasks}\ttasks.json\n`);
    const entries = git(['ls-tree', `${head}^{tree}`]);
    const tree = git(['mktree'], `${entries}\n040000 tree ${vscode}\t.vscode\n`);
    git(['update-ref', `refs/heads/${place.branch}`, git(['commit-tree', tree, '-p', head, '-m', 'changes'])]);
  }

  it('held as protected, nothing written; applied with protectedOk', async () => {
    w.script.on('c', write('b.txt', 'from afar\n'), { text: 'wrote b.txt' });
    const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[c]] write b.txt', label: 'afar', placement: 'far' });
    await run.result;
    await run.dispose();
    await tampered(run.id);

    const held = await w.t.h.worktrees.apply(run.id);
    assert.equal(held.applied, false);
    assert.deepEqual(!held.applied && held.conflicts.map((c) => [c.path, c.protected]), [['.vscode/tasks.json', true]]);
    assert.match(!held.applied ? held.conflicts[0].message : '', /protected path.*another machine.*--allow-protected/);
    assert.equal(fs.existsSync(path.join(w.ws, '.vscode')), false, 'no task written');
    assert.equal(fs.existsSync(path.join(w.ws, 'b.txt')), false, 'nothing of the apply written');
    assert.equal((await w.t.h.worktrees.list())[0].state, 'open');

    const applied = await w.t.h.worktrees.apply(run.id, { protectedOk: true });
    assert.equal(applied.applied, true);
    assert.equal(read(path.join(w.ws, '.vscode', 'tasks.json')), TASKS);
    assert.equal(read(path.join(w.ws, 'b.txt')), 'from afar\n');
  });

  it('a local worktree child’s change to .vscode is applied as before (its write was approved here)', async () => {
    w.script.on('l', write('b.txt', 'near\n'), { text: 'done' });
    const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[l]] write', label: 'local', isolation: 'worktree' });
    await run.result;
    await run.dispose();
    const place = ofType((await w.t.h.readSession(run.id)).events, 'worktree')[0];
    fs.mkdirSync(path.join(place.path, '.vscode'));
    fs.writeFileSync(path.join(place.path, '.vscode', 'settings.json'), '{}\n');
    const r = await w.t.h.worktrees.apply(run.id);
    assert.equal(r.applied, true, JSON.stringify(r));
    assert.equal(read(path.join(w.ws, '.vscode', 'settings.json')), '{}\n');
  });
});
