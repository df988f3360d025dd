// Best of N's comparison of a way whose worktree cannot be read (decision 0061, amended in s53):
// its work is not reported as "no files changed" nor "no worktree" — the human about to discard
// the others would lose what it changed. A real repository; the way's worktree is made unreadable
// to git by replacing its `.git` link file with a folder.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ChatBody } from '../../support/model-server';
import { ofType } from '../subagent/helpers';
import { placeOf, read, worktreeWorld } from '../worktree/fixture';

function byModel(body: ChatBody) {
  const last = body.messages[body.messages.length - 1];
  if (body.model === 'test-model') return { text: 'the first answer' };
  if (last.role === 'tool') return { text: `done by ${body.model}` };
  return { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: `${body.model}\n` } }] };
}

describe('Best of N: a way whose worktree cannot be read', () => {
  const w = worktreeWorld();

  it('is shown as unreadable with what failed, never as an open worktree with no files changed or as missing', async () => {
    w.server.setFallback((body) => byModel(body));
    await w.root.accept('rewrite a.txt', { kind: 'user' });
    await w.t.h.settle();
    const seq = ofType(w.root.session.events, 'user/message')[0].seq;
    const { group, ways } = await w.t.h.bestOf.start(w.root.session.header.id, seq, { ways: [{ model: 'model-a' }, { model: 'model-b' }] });
    await w.t.h.settle();
    const b = await placeOf(w, ways[1]);
    assert.equal(read(path.join(b.root, 'a.txt')), 'model-b\n');
    // The worktree's link to its repository broken: git no longer reads the folder as a worktree.
    fs.rmSync(path.join(b.path, '.git'));
    fs.mkdirSync(path.join(b.path, '.git'));
    const v = await w.t.h.bestOf.view(group);
    const [wa, wb] = v.ways;
    assert.deepEqual(
      wa.files.map((f) => f.path),
      ['a.txt'],
    );
    assert.equal(wa.unreadable, undefined);
    assert.equal(wb.worktree, 'open', 'its record says open: never "missing" because reading it failed');
    assert.deepEqual(wb.files, []);
    assert.match(wb.unreadable ?? '', /^WORKTREE_UNREADABLE: .*way 2.*could not be read.*Nothing was discarded/s);
    assert.equal(read(path.join(b.root, 'a.txt')), 'model-b\n', 'its work is where it was');
  });
});
