// The tree at 10,000 nodes in the built webview (headless chromium, scripted host), as the
// webview.tree10k figure renders it: only the rows in view are drawn, the keyboard and the
// scroll reach every row, a delta reaches its row among thousands, a second snapshot replaces
// what every reader shows, and a saved scroll comes back after a reload (decision 0067).
import * as assert from 'node:assert/strict';
import type { HostToWebview, TreeNode } from '../../src/protocol';
import { FIXTURE_AT, FIXTURE_SETTINGS, rootNode, webviewFixture } from '../support/webview-fixture';

const CONVERSATIONS = 50;
const PER = 199;
/** Conversation `c` and its 199 children, all expanded: 10,000 rows. */
const childId = (c: number, k: number) => `s-conv-${c}.${k.toString(16).padStart(6, '0')}`;
function makeTree(titleOf: (c: number) => string = (c) => `Conversation ${c}`): TreeNode[] {
  const nodes: TreeNode[] = [];
  for (let c = 0; c < CONVERSATIONS; c++) {
    const root = rootNode(`s-conv-${c}`, { title: titleOf(c), createdAt: new Date(Date.parse(FIXTURE_AT) + c * 60_000).toISOString() });
    nodes.push(root);
    for (let k = 0; k < PER; k++)
      nodes.push({
        ...rootNode(childId(c, k), { createdAt: new Date(Date.parse(root.createdAt) + k + 1).toISOString() }),
        parentId: root.id,
        origin: 'subagent',
        depth: 1,
        label: `worker-${c}-${k}`,
        title: undefined,
      });
  }
  return nodes;
}
const snapshot = (nodes: TreeNode[], extra: Partial<Extract<HostToWebview, { type: 'state/snapshot' }>> = {}): HostToWebview => ({
  type: 'state/snapshot',
  nodes,
  settings: FIXTURE_SETTINGS,
  approvals: [],
  ...extra,
});

describe('webview: a 10,000-node tree (scripted host)', () => {
  const w = webviewFixture('arbor-webview-scale-');
  const { send, count, textOf } = w;
  const rowIds = () => w.page.evaluate<string[]>(`[...document.querySelectorAll('[role=treeitem]')].map((r) => r.dataset.rowId)`);
  const focused = () => w.page.evaluate<string>(`document.activeElement.dataset.rowId`);

  it('draws only the rows in view, newest conversation first, and End / Home reach the last and first rows', async () => {
    await w.open();
    await send(snapshot(makeTree()));
    const drawn = await rowIds();
    assert.ok(drawn.length > 0 && drawn.length < 60, `a window of rows, not 10,000 (${drawn.length})`);
    assert.deepEqual(drawn.slice(0, 3), ['s-conv-49', childId(49, 0), childId(49, 1)]);
    assert.equal(await w.page.evaluate<string>(`document.querySelector('[role=tree]').style.height`), `${10_000 * 40}px`, 'the scroll height holds every row');
    await w.page.focus('[data-row-id="s-conv-49"]');
    await w.page.keyboard.press('End');
    assert.equal(await focused(), childId(0, PER - 1), 'the last child of the oldest conversation');
    assert.equal(await w.page.evaluate(`document.activeElement.getAttribute('aria-posinset')`), String(PER));
    await w.page.keyboard.press('ArrowLeft'); // a leaf: to its parent, 199 rows up
    assert.equal(await focused(), 's-conv-0');
    await w.page.keyboard.press('Home');
    assert.equal(await focused(), 's-conv-49');
  });

  it("a new tree's first frame draws the rows in view; the rows around them (for scrolling) follow in the next frame", async () => {
    await w.open();
    // Sent at the start of a frame, as the webview bench times it: the rows of that painted frame, then of the next.
    const [first, next] = await w.page.evaluate<[string[], string[]]>(`new Promise((resolve) => requestAnimationFrame(() => {
      const ids = () => [...document.querySelectorAll('[role=treeitem]')].map((r) => r.dataset.rowId);
      window.__host.send(${JSON.stringify(snapshot(makeTree()))});
      const ch = new MessageChannel();
      ch.port1.onmessage = () => {
        const drawn = ids();
        requestAnimationFrame(() => {
          const after = new MessageChannel();
          after.port1.onmessage = () => resolve([drawn, ids()]);
          after.port2.postMessage(0);
        });
      };
      ch.port2.postMessage(0);
    }))`);
    const inView = await w.page.evaluate<number>(`Math.ceil(document.querySelector('.tree-body .scroller').clientHeight / 40)`);
    assert.ok(first.length >= inView && first.length <= 10, `the first frame draws the ${inView} rows in view (at most 10), not more: ${first.length}`);
    assert.deepEqual(next.slice(0, first.length), first, 'the rows in view stay, in order');
    assert.ok(next.length > first.length, `the next frame adds rows below the view for scrolling (${first.length} → ${next.length})`);
    // Scrolled to the middle, the window has rows above and below the view.
    await w.page.evaluate(`(async () => {
      const s = document.querySelector('.tree-body .scroller');
      s.scrollTop = 5000 * 40;
      s.dispatchEvent(new Event('scroll'));
      await window.__host.frame();
    })()`);
    const middle = await w.page.evaluate<number[]>(
      `[...document.querySelectorAll('[role=treeitem]')].map((r) => new DOMMatrix(getComputedStyle(r).transform).m42 / 40)`,
    );
    assert.ok(Math.min(...middle) < 5000 && Math.max(...middle) >= 5000 + inView, `rows ${Math.min(...middle)}–${Math.max(...middle)} around row 5,000`);
  });

  it('a delta for one node among 10,000 changes its row; a second snapshot replaces every row it shows', async () => {
    await w.open();
    const nodes = makeTree();
    await send(snapshot(nodes, { selected: 's-conv-49' }));
    const row = `[data-row-id="${childId(49, 2)}"]`;
    assert.match(await textOf(row), /idle/);
    await send({ type: 'tree/node', node: { ...nodes.find((n) => n.id === childId(49, 2))!, status: 'failed', lastStopReason: 'error' } });
    assert.match(await textOf(row), /failed/);
    assert.match(await textOf(`[data-row-id="${childId(49, 3)}"]`), /idle/, 'its neighbour is unchanged');
    // The view shown again: the host sends a whole new snapshot with the same ids.
    await send(
      snapshot(
        makeTree((c) => `Renamed ${c}`),
        { selected: 's-conv-49' },
      ),
    );
    assert.match(await textOf('[data-row-id="s-conv-49"] .name'), /^Renamed 49$/);
    assert.match(await textOf(row), /idle/, 'the delta before the snapshot is gone with it');
    assert.equal(await count(`[role=treeitem][aria-selected=true]`), 1);
  });

  it('comes back scrolled where it was after being hidden (reloaded)', async () => {
    await w.open();
    await send(snapshot(makeTree()));
    await w.page.evaluate(`(async () => {
      const s = document.querySelector('.tree-body .scroller');
      s.scrollTop = 4000 * 40;
      s.dispatchEvent(new Event('scroll'));
      await new Promise((r) => setTimeout(r, 300)); // the state write is coalesced
    })()`);
    const before = await rowIds();
    assert.ok(
      before.includes('s-conv-29'),
      `row 4,000 (conversation 29: 20 conversations of 200 rows above it) is drawn after scrolling (${before.slice(0, 3).join(', ')}…)`,
    );
    await w.page.reload({ waitUntil: 'load' });
    await w.page.waitForFunction(`window.__posted && window.__posted.some((m) => m.type === 'webview/ready')`);
    await send(snapshot(makeTree()));
    assert.equal(await w.page.evaluate<number>(`document.querySelector('.tree-body .scroller').scrollTop`), 4000 * 40);
    assert.deepEqual(await rowIds(), before, 'the same rows are drawn');
  });
});
