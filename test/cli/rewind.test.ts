import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { arbor, cliWorld } from '../support/cli';

describe('cli: arbor rewind (decision 0059)', () => {
  const w = cliWorld('arbor-cli-rewind-');
  const read = (rel: string) => (fs.existsSync(path.join(w.ws, rel)) ? fs.readFileSync(path.join(w.ws, rel), 'utf8') : null);

  /** One run that edits a.txt with a tool and creates b.txt with a command; its session id and the seq of its prompt. */
  async function edited(): Promise<{ id: string; seq: number }> {
    fs.writeFileSync(path.join(w.ws, 'a.txt'), 'a0\n');
    w.server.enqueue(
      {
        toolCalls: [
          { id: 'c1', name: 'write_file', arguments: { path: 'a.txt', content: 'a1\n' } },
          { id: 'c2', name: 'run_command', arguments: { command: 'echo b > b.txt' } },
        ],
      },
      { text: 'done' },
    );
    const r = await arbor(['run', ...w.common, 'edit']);
    assert.equal(r.code, 0, r.stderr);
    const id = /session (\S+)/.exec(r.stderr)?.[1] ?? '';
    const log = await arbor(['log', ...w.common.slice(0, 2), id]);
    const events = log.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { seq: number; type: string });
    assert.ok(
      events.some((e) => e.type === 'checkpoint'),
      'arbor log shows the checkpoint',
    );
    return { id, seq: events.find((e) => e.type === 'user/message')!.seq };
  }

  it('--dry-run prints the preview and writes nothing; then it rewinds, and --undo puts it back', async () => {
    const { id, seq } = await edited();
    const dry = await arbor(['rewind', ...w.common, id, '--to', String(seq), '--dry-run']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /^restore a\.txt$/m);
    assert.match(dry.stdout, /-a1\n {2}\+a0/);
    assert.match(dry.stdout, /remove b\.txt/);
    assert.match(dry.stderr, /dry run: nothing was written/);
    assert.deepEqual([read('a.txt'), read('b.txt')], ['a1\n', 'b\n']);

    const done = await arbor(['rewind', ...w.common, id, '--to', String(seq)]);
    assert.equal(done.code, 0, done.stderr);
    assert.deepEqual([read('a.txt'), read('b.txt')], ['a0\n', null]);
    const undo = /arbor rewind \S+ --undo (\d+)/.exec(done.stderr)?.[1];
    assert.ok(undo, done.stderr);
    const back = await arbor(['rewind', ...w.common, id, '--undo', undo]);
    assert.equal(back.code, 0, back.stderr);
    assert.deepEqual([read('a.txt'), read('b.txt')], ['a1\n', 'b\n']);
  });

  it('a conflict without --on-conflict is printed, changes nothing and exits 1; --on-conflict keep leaves it', async () => {
    const { id, seq } = await edited();
    fs.writeFileSync(path.join(w.ws, 'a.txt'), 'mine\n');
    const r = await arbor(['rewind', ...w.common, id, '--to', String(seq)]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /CONFLICT restore a\.txt/);
    assert.match(r.stderr, /nothing was changed: 1 file\(s\) conflict\. Rerun with --on-conflict keep/);
    assert.deepEqual([read('a.txt'), read('b.txt')], ['mine\n', 'b\n']);
    const keep = await arbor(['rewind', ...w.common, id, '--to', String(seq), '--on-conflict', 'keep']);
    assert.equal(keep.code, 0, keep.stderr);
    assert.deepEqual([read('a.txt'), read('b.txt')], ['mine\n', null]);
  });

  it('--conversation forks at the point and touches no file; a bad seq says what to do', async () => {
    const { id, seq } = await edited();
    const r = await arbor(['rewind', ...w.common, id, '--to', String(seq), '--conversation']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^forked s-/m);
    assert.deepEqual([read('a.txt'), read('b.txt')], ['a1\n', 'b\n']);
    const bad = await arbor(['rewind', ...w.common, id, '--to', '9999']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /has no event 9999 .*pick a seq that `arbor log` prints/);
    const none = await arbor(['rewind', ...w.common, id]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /needs --to SEQ/);
  });

  it('without git on PATH: one notice, no checkpoints, and the run itself works', async () => {
    const bare = path.join(w.dir, 'no-git-bin');
    fs.mkdirSync(bare);
    w.server.enqueue({ toolCalls: [{ id: 'c1', name: 'write_file', arguments: { path: 'a.txt', content: 'a1\n' } }] }, { text: 'done' });
    const r = await arbor(['run', ...w.common, '--json', 'edit'], { PATH: bare });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr.match(/Checkpoints are off: git was not found on PATH/g)?.length, 1, r.stderr);
    assert.equal(read('a.txt'), 'a1\n', 'the write happened');
    assert.ok(!r.stdout.includes('"type":"checkpoint"'), 'nothing recorded');
    const id = /session (\S+)/.exec(r.stderr)?.[1] ?? '';
    const rw = await arbor(['rewind', ...w.common, id, '--to', '0'], { PATH: bare });
    assert.equal(rw.code, 1);
    assert.match(rw.stderr, /Checkpoints are off: git was not found on PATH.*install git/);
  });
});
