// Issue 21, point 5 (headless chromium, scripted host): the row that needs you shows its name.
// At the default 300 px a running root and an approval-waiting root keep at least ~12
// characters of their names before any status badge or metadata; "needs approval" gives way to
// its icon; a running remote child keeps its program badge; and a wider panel never shows less
// of a name than a narrower one.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TreeNode } from '../../src/protocol';
import { webviewFixture } from '../support/webview-fixture';

const SETTINGS = { sandbox: 'workspace-write', approval: 'ask', restricted: false, hasApiKey: true, modelSource: 'endpoint', model: 'deepseek-chat' } as const;
const T = '2025-06-01T09:00:00.000Z';
const RUNNING = 's-root-1';
const WAITING = 's-root-2';
const REMOTE = `${RUNNING}.aaaaaa`;
const node = (id: string, extra: Partial<TreeNode>): TreeNode => ({
  id,
  origin: 'user',
  depth: 0,
  status: 'idle',
  tokens: { prompt: 41_000, completion: 2_100, cacheHit: 30_000 },
  reports: 0,
  createdAt: T,
  ...extra,
});
const budget = { maxTokens: 75_000, spentTokens: 43_100 };
const NODES = [
  node(RUNNING, {
    title: 'please survey the workspace and list the packages',
    provider: 'deepseek',
    status: 'running',
    activity: 'calling run_command',
    activeSince: Date.now() - 65_000,
    costUsd: 0.0412,
    budget,
    reports: 2,
    pendingApprovals: 1,
  }),
  node(REMOTE, {
    parentId: RUNNING,
    origin: 'subagent',
    depth: 1,
    label: 'claude-reviewer',
    provider: 'claude-code',
    status: 'running',
    activity: 'thinking',
    activeSince: Date.now() - 12_000,
    remote: { program: 'claude-code', version: '2.1.332 (Claude Code)' },
  }),
  node(WAITING, {
    title: 'please refactor the budget checks into one module',
    provider: 'deepseek',
    status: 'approval',
    activity: 'waiting for approval',
    activeSince: Date.now() - 5_000,
    costUsd: 0.0031,
    pendingApprovals: 1,
  }),
];
const ARTIFACTS = path.join(__dirname, '..', '..', '..', 'test-artifacts', 'webview-layout');

interface Measured {
  id: string;
  visibleChars: number;
  nameLength: number;
  wordShown: boolean;
  statusIconShown: boolean;
  metaShown: string[];
}

/** Per row: how many characters of the name are visible, what else the first line shows. */
const MEASURE = `(() => [...document.querySelectorAll('[role="treeitem"]')].map((r) => {
  const name = r.querySelector('.name');
  const head = r.querySelector('.head').getBoundingClientRect();
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = getComputedStyle(name).font;
  const text = name.textContent;
  // The ellipsis takes a character's room when the name is cut.
  const room = name.clientWidth - (name.scrollWidth > name.clientWidth + 0.5 ? ctx.measureText('…').width : 0);
  let visible = 0;
  while (visible < text.length && ctx.measureText(text.slice(0, visible + 1)).width <= room + 0.5) visible++;
  const shown = (el) => {
    if (!el || getComputedStyle(el).display === 'none') return false;
    const b = el.getBoundingClientRect();
    return b.width > 1 && b.top >= head.top - 1 && b.bottom <= head.bottom + 1 && b.right <= head.right + 1;
  };
  const word = r.querySelector('.status .word');
  const icon = r.querySelector('.status .codicon').getBoundingClientRect();
  const line = r.querySelector('.line').getBoundingClientRect();
  return {
    id: r.dataset.rowId,
    visibleChars: visible,
    nameLength: text.length,
    wordShown: !!word && getComputedStyle(word).display !== 'none' && word.getBoundingClientRect().width > 1,
    statusIconShown: icon.width > 1 && icon.right <= line.right + 1,
    metaShown: [...r.querySelectorAll('.meta')].filter(shown).map((m) => m.textContent),
  };
}))()`;

describe('webview: the row that needs you shows its name (issue 21.5)', () => {
  const w = webviewFixture('arbor-webview-row-names-');
  const { send } = w;
  before(() => fs.mkdirSync(ARTIFACTS, { recursive: true }));

  async function measure(width: number, selected = RUNNING): Promise<Measured[]> {
    await w.open({ view: 'panel' }, { viewport: { width, height: 700 } });
    await send({ type: 'state/snapshot', nodes: NODES, selected, settings: SETTINGS, approvals: [] });
    // Hovering a row shows its actions: the worst case for the name's room.
    await w.page.hover(`[data-row-id="${WAITING}"]`);
    await w.page.screenshot({ path: path.join(ARTIFACTS, `row-names-${width}px.png`), clip: { x: 0, y: 0, width, height: 200 } });
    return w.page.evaluate<Measured[]>(MEASURE);
  }
  const of = (rows: Measured[], id: string) => {
    const r = rows.find((x) => x.id === id);
    assert.ok(r, `a row for ${id}`);
    return r;
  };

  it('at 300 px the running and the approval-waiting roots keep at least 12 characters of their names', async () => {
    const rows = await measure(300);
    for (const id of [RUNNING, WAITING]) {
      const r = of(rows, id);
      assert.ok(r.visibleChars >= 12, `${id} shows ${r.visibleChars} characters of its name: ${JSON.stringify(r)}`);
      assert.ok(r.statusIconShown, `${id} still shows its status icon`);
    }
    // "needs approval" gives way to its icon (the word stays in the label and tooltip).
    assert.equal(of(rows, WAITING).wordShown, false, 'the approval row shows the status as its icon');
    const label = await w.page.evaluate<string>(`document.querySelector('[data-row-id="${WAITING}"]').getAttribute('aria-label')`);
    assert.match(label, /needs approval/);
  });

  it('at 300 px a running remote child keeps its program badge and its name', async () => {
    const rows = await measure(300, REMOTE);
    const r = of(rows, REMOTE);
    assert.ok(
      r.metaShown.some((m) => m.startsWith('claude-code')),
      `the program badge is on the line: ${JSON.stringify(r)}`,
    );
    // One level down, selected (its actions shown) and beside the badge: ~12 characters (11 or more).
    assert.ok(r.visibleChars >= Math.min(11, r.nameLength), `the child shows ${r.visibleChars} characters of its name`);
  });

  it('a wider panel never shows less of a name than a narrower one', async () => {
    const narrow = await measure(220);
    const wide = await measure(300);
    for (const id of [RUNNING, WAITING, REMOTE]) {
      assert.ok(
        of(wide, id).visibleChars >= of(narrow, id).visibleChars,
        `${id}: ${of(wide, id).visibleChars} characters at 300 px, ${of(narrow, id).visibleChars} at 220 px`,
      );
    }
  });
});
