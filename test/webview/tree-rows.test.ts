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
    const rows = visibleRows(buildChildren(nodes), new Set());
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
    const rows = visibleRows(buildChildren(nodes), new Set(['a.1']));
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
      visibleRows(children, new Set()).map((r) => r.id),
      ['x', 'y'],
    );
  });

  // How fast is the bench's (webview.tree2000.render_ms), never a timed unit test.
  it('flattens 2,000 nodes: every node once, each after its parent', () => {
    const many = Array.from({ length: 2000 }, (_, i) => n(`n${i}`, i < 20 ? undefined : `n${Math.floor(i / 3)}`, i % 60));
    const rows = visibleRows(buildChildren(many), new Set());
    assert.equal(rows.length, 2000);
    assert.equal(new Set(rows.map((r) => r.id)).size, 2000, 'no node twice');
    const at = new Map(rows.map((r, i) => [r.id, i]));
    const parentOf = new Map(many.map((x) => [x.id, x.parentId]));
    for (const r of rows) {
      const parent = parentOf.get(r.id);
      if (parent) assert.ok(at.get(parent)! < at.get(r.id)!, `${r.id} after its parent`);
    }
  });
});
