// Best of N in the built webview (headless chromium, scripted host; decision 0061): the chat of a
// way shows its group side by side in a 300 px panel — each way's model, status, answer and files
// with +/− — "Apply this one" asks the host for that way, and a refused apply's conflicts are
// shown (nothing was changed); once one is applied, the others are offered Discard.
import * as assert from 'node:assert/strict';
import type { TreeNode, WaysView, WebviewToHost } from '../../src/protocol';
import { FIXTURE_SETTINGS, restingNode, webviewFixture } from '../support/webview-fixture';

const SETTINGS = FIXTURE_SETTINGS;
const ROOT = 's-root-1';
const GROUP = 'g0123abcd';
const node = restingNode;
const way = (n: number): TreeNode =>
  node(`s-root-1.w00000${n}`, {
    parentId: ROOT,
    origin: 'fork',
    title: `Way ${n}: make greet handle an empty name`,
    bestOf: { group: GROUP, way: n, of: 2 },
    worktree: { state: 'open', branch: `arbor/way${n}-00000${n}` },
  });
const view = (chosen?: string): WaysView => ({
  group: GROUP,
  source: ROOT,
  prompt: 'make greet handle an empty name',
  settled: true,
  ...(chosen ? { chosen } : {}),
  ways: [1, 2].map((n) => ({
    id: way(n).id,
    way: n,
    ...(n === 2 ? { model: 'a-much-longer-model-name-that-must-not-widen-the-panel' } : {}),
    status: 'idle',
    settled: true,
    outcome: n === 1 ? 'Checked the name first; an empty one greets a stranger.' : 'Fell back to "world".',
    worktree: chosen === way(n).id ? 'applied' : 'open',
    files: chosen === way(n).id ? [] : [{ path: 'src/some/deeply/nested/folder/greet.js', status: 'modified', added: 3, removed: 1 }],
  })),
});

describe('webview: Best of N, the ways side by side', () => {
  const w = webviewFixture('arbor-webview-ways-');
  const { send, posted, count, textOf } = w;
  const lastOf = async <T extends WebviewToHost['type']>(type: T) =>
    (await posted()).filter((m): m is Extract<WebviewToHost, { type: T }> => m.type === type).at(-1);

  it('shows each way in a 300 px panel; Apply this one asks for that way; a conflict is shown; then the other is offered Discard', async () => {
    await w.open({ view: 'panel' }, { viewport: { width: 300, height: 700 } });
    await send({ type: 'state/snapshot', nodes: [node(ROOT, { title: 'Greeting' }), way(1), way(2)], selected: way(1).id, settings: SETTINGS, approvals: [] });
    await w.waitFor(`window.__posted.some((m) => m.type === 'bestof/view')`, 'the comparison asked for');
    const ask = await lastOf('bestof/view');
    assert.equal(ask?.group, GROUP);
    await send({ type: 'request/done', id: ask!.id, ok: true, ...view() });
    await w.waitFor(`document.querySelectorAll('section.ways article.way').length === 2`, 'two ways shown');
    assert.match(await textOf('article.way[data-way="1"]'), /Way 1[\s\S]*Checked the name first[\s\S]*greet\.js[\s\S]*\+3[\s\S]*−1/);
    assert.match(await textOf('article.way[data-way="2"] .who'), /a-much-longer-model-name/);
    const overflow = await w.page.evaluate<number>(
      `document.querySelector('section.ways').getBoundingClientRect().right - document.documentElement.clientWidth`,
    );
    assert.ok(overflow <= 0.5, `the comparison is ${overflow}px wider than the panel`);

    await w.click('article.way[data-way="2"] button.apply');
    const choose = await lastOf('bestof/choose');
    assert.deepEqual([choose?.group, choose?.sessionId], [GROUP, way(2).id]);
    await send({
      type: 'request/done',
      id: choose!.id,
      ok: true,
      applied: false,
      files: [],
      conflicts: [{ path: 'src/greet.js', message: 'CONFLICT (content)' }],
    });
    await w.waitFor(`!!document.querySelector('article.way[data-way="2"] .conflicts')`, 'the conflict shown');
    assert.match(
      await textOf('article.way[data-way="2"] .conflicts'),
      /Not applied: 1 conflict\(s\); nothing in the workspace was changed\.[\s\S]*src\/greet\.js/,
    );
    // The refresh after the apply: way 1 was applied meanwhile; way 2 is offered Discard and Keep branch.
    const again = await lastOf('bestof/view');
    await send({ type: 'request/done', id: again!.id, ok: true, ...view(way(1).id) });
    await w.waitFor(`!!document.querySelector('section.ways button.discard-others')`, 'Discard the others offered');
    assert.equal(await count('article.way[data-way="1"][data-chosen="true"]'), 1);
    assert.equal(await count('article.way[data-way="2"] button.discard'), 1);
    assert.equal(await count('article.way[data-way="2"] button.keep'), 1);
    assert.equal(await count('article.way[data-way="1"] button.apply'), 0, 'the applied way has nothing left to apply');
  });
});
