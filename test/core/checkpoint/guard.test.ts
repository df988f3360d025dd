import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { shadowDirOf } from '../../../src/core/checkpoint/shadow';
import { ofType, subagentWorld } from '../subagent/helpers';
import { checkpointsOf, run, write } from './fixture';

/** Every file under a folder with a hash of its bytes: an entry that is still there unchanged was not rewritten. */
function listing(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        out.push(`${path.relative(dir, p)} ${createHash('sha1').update(fs.readFileSync(p)).digest('hex')}`);
      }
    }
  };
  walk(dir);
  return out.sort();
}

describe('checkpoints: what is left out, and what a model cannot reach (decision 0059)', () => {
  let tmp: string | undefined;
  const w = subagentWorld({}, { perTest: true });
  afterEach(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    tmp = undefined;
  });

  it('too-large files, and ignored ones a command changes, are left out and said once per session, not per step; an ignored file a file tool writes is recorded', async () => {
    await w.setup({ checkpoints: { maxFileBytes: 64 } });
    const ws = fs.realpathSync(w.t.workspace);
    fs.writeFileSync(path.join(ws, '.gitignore'), '*.log\n');
    const big = 'x'.repeat(100);
    w.script.on(
      'root',
      { toolCalls: [write('a.log', 'one'), write('big.txt', big), write('ok.txt', 'fine')] },
      { toolCalls: [write('a.log', 'two'), write('big.txt', `${big}y`), run(`printf '%0200d' 0 > big2.txt && echo z > z.txt && echo c > c.log`)] },
      { toolCalls: [run(`printf '%0300d' 0 > big2.txt`)] },
      { text: 'done' },
    );
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const cps = checkpointsOf(w.root.session.events);
    // Calls of a step end in any order: sorted by name.
    const skipped = cps
      .flatMap((c) => c.skipped ?? [])
      .map((s) => [path.basename(s.path), s.reason])
      .sort((a, b) => (a[0] < b[0] ? -1 : 1));
    assert.deepEqual(skipped, [
      ['big.txt', 'too-large'],
      ['big2.txt', 'too-large'],
    ]);
    const changed = cps
      .flatMap((c) => c.changes)
      .map((c) => path.basename(c.path))
      .sort();
    // The command's ignored c.log is not (its snapshot leaves ignored files out, unsaid); a file tool's a.log is, each write.
    assert.deepEqual(changed, ['a.log', 'a.log', 'ok.txt', 'z.txt'], 'the files within the rules, and the ignored one a file tool wrote');
  });

  it("never touches the workspace's own .git, and runs no hook of it", async () => {
    await w.setup();
    const ws = fs.realpathSync(w.t.workspace);
    execFileSync('git', ['init', '-q', ws]);
    fs.writeFileSync(path.join(ws, 'tracked.txt'), 't0\n');
    const marker = path.join(ws, '..', 'hook-ran');
    for (const hook of ['pre-commit', 'post-index-change', 'post-checkout']) {
      fs.writeFileSync(path.join(ws, '.git', 'hooks', hook), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
    }
    const before = listing(path.join(ws, '.git'));
    w.script.on('root', { toolCalls: [run('echo t1 > tracked.txt && echo n > new.txt'), write('w.txt', 'w')] }, { text: 'done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    assert.equal(checkpointsOf(w.root.session.events)[0].changes.length, 3);
    const plan = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: ofType(w.root.session.events, 'user/message')[0].seq });
    await w.t.h.checkpoints.apply(plan);
    assert.equal(fs.readFileSync(path.join(ws, 'tracked.txt'), 'utf8'), 't0\n');
    assert.deepEqual(listing(path.join(ws, '.git')), before, 'the user .git is exactly as it was');
    assert.equal(fs.existsSync(marker), false, 'no hook of the workspace ran');
    assert.ok(fs.existsSync(path.join(shadowDirOf(w.t.storeDir, ws), 'HEAD')), 'the shadow repository lives in the store');
  });

  it('a model cannot reach or rewrite the shadow repository: write_file and run_command aimed at it are refused', async () => {
    // The store inside the workspace (a CLI `--store` there): the harshest case, the store is then protected, not outside.
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-ckpt-'));
    const ws = fs.realpathSync(tmp);
    await w.setup({ workspace: [ws], storeDir: path.join(ws, '.store') });
    const shadow = shadowDirOf(path.join(ws, '.store'), ws);
    w.script.on('root', { toolCalls: [run('echo seed > seed.txt')] }, { text: 'seeded' });
    await w.root.accept('[[root]] seed');
    await w.t.h.settle();
    const head = path.join(shadow, 'HEAD');
    const exclude = path.join(shadow, 'info', 'exclude');
    const before = listing(shadow);
    const rel = path.relative(ws, shadow);
    w.script.on(
      'root',
      {
        toolCalls: [
          write(`${rel}/HEAD`, 'ref: refs/heads/evil\n'),
          write(`${rel}/info/exclude`, '*\n'),
          write(`${rel}/hooks/post-index-change`, '#!/bin/sh\n'),
        ],
      },
      { toolCalls: [run(`echo evil > '${head}'; echo '*' > '${exclude}'; rm -rf '${shadow}/objects'; echo done`)] },
      { text: 'tried' },
    );
    await w.root.accept('[[root]] attack');
    await w.t.h.settle();
    const results = ofType(w.root.session.events, 'tool/result').slice(-4);
    for (const r of results.slice(0, 3)) {
      assert.equal(r.isError, true, `${r.content}`);
      assert.match(r.content, /store|protected|approval/i);
    }
    assert.match(results[3].content, /Read-only file system|Permission denied/);
    const after = new Set(listing(shadow));
    assert.deepEqual(
      before.filter((x) => !after.has(x)),
      [],
      'every file of the shadow repository is still there, unchanged (snapshots of this turn may only add objects)',
    );
    assert.ok(!fs.existsSync(path.join(shadow, 'hooks', 'post-index-change')), 'no hook was planted');
    const recorded = checkpointsOf(w.root.session.events).flatMap((c) => c.changes.map((x) => x.path));
    assert.ok(!recorded.some((p) => p.startsWith(path.join(ws, '.store'))), 'the store is never recorded');
  });

  it('every root of the call has its own shadow: a command and a file tool in a second root are recorded against it', async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-ckpt-'));
    const one = fs.realpathSync(fs.mkdtempSync(path.join(tmp, 'one-')));
    const two = fs.realpathSync(fs.mkdtempSync(path.join(tmp, 'two-')));
    await w.setup({ workspace: [one, two] });
    w.script.on(
      'root',
      { toolCalls: [{ name: 'run_command', arguments: { command: 'echo x > made.txt', cwd: two } }, write(path.join(two, 'w.txt'), 'w')] },
      { text: 'done' },
    );
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const changes = checkpointsOf(w.root.session.events).flatMap((c) => c.changes);
    assert.deepEqual(changes.map((c) => [path.relative(two, c.path), c.root, c.tool]).sort(), [
      ['made.txt', two, 'run_command'],
      ['w.txt', two, 'write_file'],
    ]);
    assert.ok(fs.existsSync(path.join(shadowDirOf(w.t.storeDir, two), 'HEAD')), "the second root's shadow");
    const plan = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: ofType(w.root.session.events, 'user/message')[0].seq });
    await w.t.h.checkpoints.apply(plan);
    assert.deepEqual([fs.existsSync(path.join(two, 'made.txt')), fs.existsSync(path.join(two, 'w.txt'))], [false, false]);
  });
});
