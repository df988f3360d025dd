import * as assert from 'node:assert/strict';
import { buildChildren, ROOT, visibleRows } from '../../webview/src/lib/tree-rows';

const n = (id: string, parentId: string | undefined, minute: number) => ({
  id,
  parentId,
  createdAt: `2025-06-01T09:${String(minute).padStart(2, '0')}:00.000Z`,
});

describe('webview tree rows', () => {
  const nodes = [n('a', undefined, 0), n('b', undefined, 5), n('a.1', 'a', 1), n('a.2', 'a', 2), n('a.1.x', 'a.1', 3), n('orphan', 'gone', 4)];

  it('puts roots newest first, children in spawn order, and unknown parents at the root', () => {
    const children = buildChildren(nodes);
    assert.deepEqual(children.get(ROOT), ['b', 'orphan', 'a']);
    assert.deepEqual(children.get('a'), ['a.1', 'a.2']);
  });

  it('lists expanded nodes depth-first with aria level, position and set size', () => {
    const rows = visibleRows(buildChildren(nodes), new Set()).slice();
    assert.deepEqual(
      rows.map((r) => [r.id, r.level, r.pos, r.size, r.hasChildren, r.expanded, r.parentId]),
      [
        ['b', 1, 1, 3, false, false, undefined],
        ['orphan', 1, 2, 3, false, false, undefined],
        ['a', 1, 3, 3, true, true, undefined],
        ['a.1', 2, 1, 2, true, true, 'a'],
        ['a.1.x', 3, 1, 1, false, false, 'a.1'],
        ['a.2', 2, 2, 2, false, false, 'a'],
      ],
    );
  });

  it('hides the descendants of collapsed nodes', () => {
    const rows = visibleRows(buildChildren(nodes), new Set(['a.1'])).slice();
    assert.deepEqual(
      rows.map((r) => r.id),
      ['b', 'orphan', 'a', 'a.1', 'a.2'],
    );
    assert.equal(rows[3].expanded, false);
  });

  it('survives a cycle in corrupt input', () => {
    const children = new Map([
      [ROOT, ['x']],
      ['x', ['y']],
      ['y', ['x']],
    ]);
    assert.deepEqual(
      visibleRows(children, new Set())
        .slice()
        .map((r) => r.id),
      ['x', 'y'],
    );
  });

  // How fast is the bench's (webview.tree2000.render_ms), never a timed unit test.
  it('flattens 2,000 nodes: every node once, each after its parent', () => {
    const many = Array.from({ length: 2000 }, (_, i) => n(`n${i}`, i < 20 ? undefined : `n${Math.floor(i / 3)}`, i % 60));
    const rows = visibleRows(buildChildren(many), new Set()).slice();
    assert.equal(rows.length, 2000);
    assert.equal(new Set(rows.map((r) => r.id)).size, 2000, 'no node twice');
    const at = new Map(rows.map((r, i) => [r.id, i]));
    const parentOf = new Map(many.map((x) => [x.id, x.parentId]));
    for (const r of rows) {
      const parent = parentOf.get(r.id);
      if (parent) assert.ok(at.get(parent)! < at.get(r.id)!, `${r.id} after its parent`);
    }
  });

  it('orders nodes that arrive out of creation order, ties broken by id', () => {
    const shuffled = [n('a.2', 'a', 2), n('b', undefined, 5), n('a.1', 'a', 1), n('a', undefined, 0), n('c', undefined, 5), n('a.0', 'a', 2)];
    const children = buildChildren(shuffled);
    assert.deepEqual(children.get(ROOT), ['c', 'b', 'a'], 'roots newest first; of two at one time, the larger id first');
    assert.deepEqual(children.get('a'), ['a.1', 'a.0', 'a.2'], 'children in spawn order; of two at one time, the smaller id first');
    assert.deepEqual(shuffled[0].id, 'a.2', 'the input is not reordered');
  });

  it('leaves out a node its caller holds another node for under the same id (a duplicate)', () => {
    const first = n('a', undefined, 0);
    const again = n('a', 'gone', 1);
    const byId = new Map([[again.id, again]]);
    const children = buildChildren([first, again], byId);
    assert.deepEqual(children.get(ROOT), ['a'], 'one row for the id');
    assert.equal([...children.values()].flat().length, 1);
  });

  it('makes row objects only on demand: at, slice and indexOf agree with the depth-first order', () => {
    const rows = visibleRows(buildChildren(nodes), new Set());
    assert.equal(rows.length, 6);
    assert.deepEqual(rows.at(3), { id: 'a.1', level: 2, pos: 1, size: 2, hasChildren: true, expanded: true, parentId: 'a' });
    assert.equal(rows.at(-1), undefined, 'no wrap-around from the end');
    assert.equal(rows.at(6), undefined);
    assert.deepEqual(
      rows.slice(4, 99).map((r) => r.id),
      ['a.1.x', 'a.2'],
    );
    assert.deepEqual(rows.slice(5, 2), []);
    assert.equal(rows.indexOf('a.1.x'), 4);
    assert.equal(rows.indexOf('gone'), -1);
    const collapsed = visibleRows(buildChildren(nodes), new Set(['a']));
    assert.equal(collapsed.indexOf('a.1'), -1, 'a hidden node has no row');
    assert.equal(collapsed.at(2)?.expanded, false);
    assert.equal(collapsed.at(2)?.hasChildren, true);
  });
});
