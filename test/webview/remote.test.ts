// Issue 13 in the built webview (headless chromium, scripted host): a remote child's row
// shows its program and version as a small badge, in place of the provider, and a narrow
// side bar drops the badge before it cuts a long name short.
import * as assert from 'node:assert/strict';
import type { HostToWebview, TreeNode } from '../../src/protocol';
import { webviewFixture } from '../support/webview-fixture';

const SETTINGS = { sandbox: 'workspace-write', approval: 'ask', restricted: false, hasApiKey: true, modelSource: 'endpoint', model: 'deepseek-chat' } as const;
const T = '2025-06-01T09:00:00.000Z';
const ROOT = 's-root-1';
const CODEX = `${ROOT}.aaaaaa`;
const CLAUDE = `${ROOT}.bbbbbb`;
const OWN = `${ROOT}.cccccc`;

const node = (id: string, parentId: string | undefined, extra: Partial<TreeNode>): TreeNode => ({
  id,
  ...(parentId ? { parentId } : {}),
  origin: parentId ? 'subagent' : 'user',
  depth: parentId ? 1 : 0,
  status: 'settled',
  tokens: { prompt: 1000, completion: 100, cacheHit: 500 },
  reports: 0,
  createdAt: T,
  ...extra,
});

const NODES = [
  node(ROOT, undefined, { title: 'Root conversation', status: 'idle' }),
  node(CODEX, ROOT, { label: 'cx', provider: 'codex', mode: 'one-shot', remote: { program: 'codex', version: 'codex-cli 0.171.0' } }),
  node(CLAUDE, ROOT, { label: 'cl', provider: 'claude-code', mode: 'one-shot', remote: { program: 'claude-code', version: '2.1.332 (Claude Code)' } }),
  node(OWN, ROOT, { label: 'own', provider: 'spawn', mode: 'one-shot' }),
];

describe('webview: remote children (scripted host)', () => {
  const w = webviewFixture('arbor-webview-remote-');
  const { send, count, textOf } = w;
  const snapshot: HostToWebview = { type: 'state/snapshot', nodes: NODES, settings: SETTINGS, approvals: [] };
  const attr = (sel: string, name: string) => w.page.evaluate<string>(`document.querySelector('${sel}').getAttribute('${name}')`);

  it("shows the program and its version number in place of the provider; the hover has the program's whole version line", async () => {
    await w.open({ view: 'panel' }, { viewport: { width: 420, height: 600 } });
    await send(snapshot);
    const codex = `[data-row-id="${CODEX}"]`;
    assert.equal(await textOf(`${codex} .meta.remote`), 'codex 0.171.0');
    assert.match(await attr(`${codex} .meta.remote`, 'title'), /Run by codex \(codex-cli 0\.171\.0\)/);
    assert.match(await attr(codex, 'title'), /subagent · depth 1 · codex \(codex-cli 0\.171\.0\) · one-shot/);
    assert.equal(await textOf(`[data-row-id="${CLAUDE}"] .meta.remote`), 'claude-code 2.1.332');
    // Arbor's own child keeps its provider and has no badge.
    assert.equal(await count(`[data-row-id="${OWN}"] .meta.remote`), 0);
    assert.equal(await textOf(`[data-row-id="${OWN}"] .meta`), 'spawn');
  });

  it('in a narrow side bar the badge stays beside a short name and gives way before a long name is cut below ~12 characters', async () => {
    await w.open({ view: 'panel' }, { viewport: { width: 150, height: 600 } });
    await send(snapshot);
    const measure = (id: string) =>
      w.page.evaluate<{ nameCut: boolean; badgeShown: boolean; badgeOverflows: boolean; nameWidth: number; twelve: number }>(`(() => {
      const row = document.querySelector('[data-row-id="${id}"]');
      const head = row.querySelector('.head').getBoundingClientRect();
      const name = row.querySelector('.name');
      const badge = row.querySelector('.meta.remote').getBoundingClientRect();
      const shown = badge.top < head.bottom;
      const probe = document.createElement('span');
      probe.style.cssText = 'position:absolute;visibility:hidden;width:12ch;font:' + getComputedStyle(name).font;
      document.body.append(probe);
      const twelve = probe.getBoundingClientRect().width;
      probe.remove();
      return { nameCut: name.scrollWidth > name.clientWidth, badgeShown: shown, badgeOverflows: shown && badge.right > head.right + 0.5, nameWidth: name.getBoundingClientRect().width, twelve };
    })()`);
    const short = await measure(CODEX);
    assert.equal(short.nameCut, false, 'the short name is whole');
    assert.equal(short.badgeOverflows, false, 'a badge on the line fits the line');
    assert.equal(short.badgeShown, true, 'beside a short name the program badge stays (issue 21.5)');
    // A long name keeps ~12 characters (12ch) beside the badge: the badge gives way first
    // (a stub, or clipped at the line's end at this width; its tooltip has it all).
    await send({ type: 'tree/node', node: { ...NODES[1], label: 'a-reviewer-with-a-rather-long-name' } });
    const long = await measure(CODEX);
    assert.equal(long.nameCut, true, 'the long name does not fit at 150 px');
    assert.ok(long.nameWidth >= long.twelve - 0.5, `the long name keeps 12ch (${long.nameWidth} of ${long.twelve} px)`);
  });
});
