// Choosing a placement (issue 26, decision 0074) everywhere a child is started: an agent file's
// `placement:` frontmatter, and a workflow's agent() option — here a workflow fanning 16 agents
// over two placements (two instances of the real test transport), every one of which runs
// there, comes back and completes.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { filled } from '../../../src/core/worktree/filling';
import { ofType, stopReasons } from '../subagent/helpers';
import { ended, placedWorld, runOnce, untilLog } from './fixture';

describe('placement: chosen by an agent file and by a workflow', function () {
  this.timeout(600_000);
  const w = placedWorld();

  it("an agent file's placement: runs its child there; the file's persona travels as words", async () => {
    fs.mkdirSync(path.join(w.ws, '.arbor', 'agents'), { recursive: true });
    fs.writeFileSync(
      path.join(w.ws, '.arbor', 'agents', 'far-reviewer.md'),
      '---\nname: far-reviewer\ndescription: reviews afar\nplacement: far\n---\nYou review code carefully.\n',
    );
    w.t.h.project.refresh();
    w.script.on('af', { text: 'reviewed' });
    const { events: evs } = await runOnce(w, { prompt: '[[af]] review', agent: 'far-reviewer' });
    assert.equal(ofType(evs, 'subagent/descriptor')[0].placement?.name, 'far');
    const body = w.script.bodies('af')[0];
    assert.ok(
      body.messages.some((m) => m.role === 'user' && String(m.content).startsWith('You review code carefully.')),
      'the persona reached the other side',
    );
  });

  it('a workflow fans 16 agents over two placements; each runs on its placement and completes', () => fanSixteen(w, { prepare: 16, collect: 16 }));
});

describe('placement: a workflow fanning 16 agents with the workspace over each kept connection', function () {
  this.timeout(600_000);
  const w = placedWorld({ far: { linkSync: true }, near: { linkSync: true } });

  it('16 agents over two placements, each prepared and collected over its link at once: every change comes back, no push, no fetch', () =>
    fanSixteen(w, { prepare: 0, collect: 0 }));
});

/** A workflow fanning 16 agents over the world's two placements; `sync`: how many prepares and collects went by push and fetch. */
async function fanSixteen(w: ReturnType<typeof placedWorld>, sync: { prepare: number; collect: number }): Promise<void> {
  const script =
    "const r = await parallel(Array.from({ length: 16 }, (_, i) => () => agent('[[wf' + i + ']] part ' + i, { label: 'part ' + i, placement: i % 2 ? 'near' : 'far' }))); return r.filter((x) => x !== null).length;";
  w.script.on(
    'root',
    { toolCalls: [{ name: 'workflow', arguments: { script, meta: { name: 'fan', description: '16 agents over two placements' } } }] },
    { text: 'root done' },
  );
  for (let i = 0; i < 16; i++)
    w.script.on(`wf${i}`, { toolCalls: [{ name: 'write_file', arguments: { path: `part-${i}.txt`, content: `${i}\n` } }] }, { text: `part ${i} done` });
  await w.root.accept('[[root]] fan out');
  await w.t.h.settle();
  const kids = w.t.h.store.children(w.root.id);
  const said = () => ofType(w.root.session.events, 'tool/result').find((r) => r.name === 'workflow')?.content;
  assert.equal(kids.length, 16, `16 children (the workflow said: ${said()})`);
  const on = { far: 0, near: 0 } as Record<string, number>;
  for (const k of kids) {
    const evs = await untilLog(w, k.id, ended(1), 'its turn');
    assert.deepEqual(stopReasons(evs), ['completed'], `${k.title}: ${ofType(evs, 'turn/end')[0].error ?? ''}`);
    const placement = ofType(evs, 'subagent/descriptor')[0].placement?.name ?? '?';
    on[placement]++;
    const i = Number(/part (\d+)/.exec(k.title ?? '')?.[1]);
    assert.equal(placement, i % 2 ? 'near' : 'far');
    const place = ofType(evs, 'worktree')[0];
    await filled(place.path); // its files, written when asked for (decision 0093)
    assert.equal(fs.readFileSync(path.join(place.root, `part-${i}.txt`), 'utf8'), `${i}\n`, 'its change came back');
  }
  assert.deepEqual(on, { far: 8, near: 8 });
  assert.equal(w.far.counts.prepare + w.near.counts.prepare, sync.prepare, 'prepares by git push');
  assert.equal(w.far.counts.collect + w.near.counts.collect, sync.collect, 'collects by git fetch');
  const wf = ofType(w.root.session.events, 'tool/result').find((r) => r.name === 'workflow');
  assert.ok(wf && !wf.isError, wf?.content);
  assert.match(wf.content, /16/);
}
