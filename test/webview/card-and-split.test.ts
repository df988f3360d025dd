// Issue 21.6 in the built webview (headless chromium, scripted host): the approval card fits a
// 220 px side bar (title, command or path, buttons all in sight, nothing sideways), says why
// "Allow for this conversation" is not offered when it is not, and keeps its title and buttons
// in view in a chat shorter than the card; the tree takes the height its rows need, up to a cap.
import * as assert from 'node:assert/strict';
import type { ApprovalPrompt, TreeNode } from '../../src/protocol';
import { webviewFixture } from '../support/webview-fixture';

const SETTINGS = { sandbox: 'workspace-write', approval: 'ask', restricted: false, hasApiKey: true, modelSource: 'endpoint', model: 'deepseek-chat' } as const;
const T = '2025-06-01T09:00:00.000Z';
const ROOT = 's-mqx1a2-k3j4h5';
const node = (id: string, extra: Partial<TreeNode> = {}): TreeNode => ({
  id,
  origin: 'user',
  depth: 0,
  status: 'approval',
  title: 'please run the tests before the release',
  tokens: { prompt: 100, completion: 10, cacheHit: 0 },
  reports: 0,
  createdAt: T,
  ...extra,
});
const prompt = (over: Partial<ApprovalPrompt>): ApprovalPrompt => ({
  requestId: 'r1',
  sessionId: ROOT,
  lineage: [ROOT],
  tool: 'run_command',
  summary: '$ npm test',
  reason: 'the model asks to run it outside the OS sandbox: the tests download fixtures, and the sandbox has no network',
  ...over,
});
const DIFF = Array.from({ length: 40 }, (_, i) => `+  "line.${i}": ${i},`).join('\n');

/** Runs in the page: what of the card is out of sight, cut or sideways. */
const CARD_PROBLEMS = `(() => {
  const out = [];
  const scroller = document.querySelector('.chat .scroller');
  const s = scroller.getBoundingClientRect();
  if (scroller.scrollWidth > scroller.clientWidth + 1) out.push('the chat scrolls sideways: ' + scroller.scrollWidth + ' > ' + scroller.clientWidth);
  const card = document.querySelector('.approval');
  const c = card.getBoundingClientRect();
  if (c.right > s.right + 1 || c.left < s.left - 1) out.push('the card is wider than the chat: ' + c.left + '..' + c.right + ' of ' + s.left + '..' + s.right);
  const need = ['.head .title', '.allow-once', '.deny-button', ...(card.querySelector('.allow-conversation') ? ['.allow-conversation'] : [])];
  for (const sel of need) {
    const el = card.querySelector(sel);
    const r = el.getBoundingClientRect();
    if (r.width === 0) { out.push(sel + ' is not drawn'); continue; }
    if (r.right > c.right + 1 || r.left < c.left - 1) out.push(sel + ' sticks out of the card sideways');
    // In sight: inside the chat's scrolled view, and the topmost thing at its centre.
    if (r.top < s.top - 1 || r.bottom > s.bottom + 1) out.push(sel + ' is out of view (' + Math.round(r.top) + '..' + Math.round(r.bottom) + ' of ' + Math.round(s.top) + '..' + Math.round(s.bottom) + ')');
    else {
      const hit = document.elementFromPoint(r.left + Math.min(10, r.width / 2), (r.top + r.bottom) / 2);
      if (!hit || !(el.contains(hit) || hit.contains(el) || el.shadowRoot?.contains(hit))) out.push(sel + ' is covered by ' + (hit?.className || hit?.tagName));
    }
  }
  for (const el of card.querySelectorAll('code, .summary, .scope, strong')) {
    const st = getComputedStyle(el);
    if (el.scrollWidth > el.clientWidth + 1 && !['auto', 'scroll'].includes(st.overflowX) && st.display !== 'inline') out.push('cut: ' + el.textContent.slice(0, 40));
  }
  return out;
})()`;

describe('webview: the approval card and the tree/chat split (issue 21.6)', () => {
  const w = webviewFixture('arbor-webview-card-');
  const { send, textOf, count } = w;
  const show = (nodes: TreeNode[], approvals: ApprovalPrompt[]) =>
    send(
      { type: 'state/snapshot', nodes, selected: ROOT, settings: SETTINGS, approvals },
      { type: 'transcript/reset', sessionId: ROOT, entries: [{ kind: 'user', seq: 0, at: T, text: 'please run the tests', source: 'user' }], hasMore: false },
    );

  it('at 220 px the card shows its title, command, scope and buttons, nothing sideways', async () => {
    await w.open({ view: 'panel' }, { viewport: { width: 220, height: 900 } });
    await show([node(ROOT)], [prompt({ grant: { kind: 'command-prefix', value: 'npm test' } })]);
    assert.deepEqual(await w.page.evaluate(CARD_PROBLEMS), []);
    assert.match(await textOf('.approval .summary'), /\$ npm test/);
    assert.match(await textOf('.approval .scope'), /covers run_command on npm test … only/);
  });

  it('a compound command: no "for this conversation", and the card says why; a path reads relative to the workspace', async () => {
    await w.open({ view: 'panel' }, { viewport: { width: 220, height: 900 } });
    const why =
      'Only once: this command chains, pipes, redirects or substitutes (;, &&, |, >, $ …), so a rule for its first words would allow more than you see here.';
    await show([node(ROOT)], [prompt({ summary: '$ npm test && npm run lint', noGrant: why })]);
    assert.equal(await count('.approval .allow-conversation'), 0);
    assert.equal((await textOf('.approval .no-grant')).trim(), why);
    assert.deepEqual(await w.page.evaluate(CARD_PROBLEMS), []);
    await send(
      { type: 'approval/resolved', requestId: 'r1', decision: 'deny' },
      {
        type: 'approval/requested',
        prompt: prompt({
          requestId: 'r2',
          tool: 'write_file',
          summary: 'write_file: overwrite .vscode/settings.json (120 bytes)',
          reason: 'protected path: .vscode',
          grant: { kind: 'path', value: '.vscode/settings.json' },
        }),
      },
    );
    assert.match(await textOf('.approval .scope'), /covers write_file on \.vscode\/settings\.json only/);
    assert.deepEqual(await w.page.evaluate(CARD_PROBLEMS), []);
  });

  it('a card taller than the chat keeps its title and buttons in view, even when the user had scrolled up', async () => {
    // A short side bar: the chat has room for less than the card with its 40-line diff.
    await w.open({ view: 'panel' }, { viewport: { width: 300, height: 480 } });
    const entries = Array.from({ length: 30 }, (_, i) => ({ kind: 'user' as const, seq: i, at: T, text: `message ${i}`, source: 'user' as const }));
    await send(
      { type: 'state/snapshot', nodes: [node(ROOT, { status: 'running' })], selected: ROOT, settings: SETTINGS, approvals: [] },
      { type: 'transcript/reset', sessionId: ROOT, entries, hasMore: false },
    );
    await w.page.evaluate(`document.querySelector('.chat .scroller').scrollTop = 0`);
    await w.page.evaluate(`document.querySelector('.chat .scroller').dispatchEvent(new Event('scroll'))`);
    await send({
      type: 'approval/requested',
      prompt: prompt({
        tool: 'write_file',
        summary: 'write_file: create .vscode/tasks.json (900 bytes)',
        reason: 'protected path: .vscode',
        grant: { kind: 'path', value: '.vscode/tasks.json' },
        preview: { kind: 'content', text: DIFF },
      }),
    });
    await w.waitFor(
      `(() => { const s = document.querySelector('.chat .scroller'); return s.scrollTop + s.clientHeight >= s.scrollHeight - 2; })()`,
      'the chat to scroll to the new card',
    );
    const tall = await w.page.evaluate<number>(
      `document.querySelector('.approval').getBoundingClientRect().height - document.querySelector('.chat .scroller').clientHeight`,
    );
    assert.ok(tall > 0, `the card is taller than the chat (by ${tall} px)`);
    assert.deepEqual(await w.page.evaluate(CARD_PROBLEMS), []);
    // Scrolled to the card's middle: still both.
    await w.page.evaluate(
      `(() => { const s = document.querySelector('.chat .scroller'); s.scrollTop = s.scrollHeight - s.clientHeight - ${Math.round(tall / 2)}; })()`,
    );
    await w.page.evaluate(`new Promise((r) => requestAnimationFrame(() => r()))`);
    assert.deepEqual(await w.page.evaluate(CARD_PROBLEMS), []);
  });

  it('the tree takes the height its rows need, up to 40% of the panel; the chat the rest', async () => {
    const H = 800;
    await w.open({ view: 'panel' }, { viewport: { width: 300, height: H } });
    const heights = () =>
      w.page.evaluate<{ tree: number; chat: number }>(
        `({ tree: document.querySelector('.tree-pane').getBoundingClientRect().height, chat: document.querySelector('.chat-pane').getBoundingClientRect().height })`,
      );
    await show([node(ROOT, { status: 'idle' })], []);
    const one = await heights();
    // The pane's header (24) and one 40 px row, give or take a few pixels: not half the side bar.
    assert.ok(one.tree >= 64 && one.tree <= 72, `one row: the tree is ${one.tree} px`);
    assert.ok(one.chat >= H - one.tree - 8, `one row: the chat has ${one.chat} px of ${H}`);
    const many = [
      node(ROOT, { status: 'idle' }),
      ...Array.from({ length: 29 }, (_, i) => node(`s-mqx1a2-k3j4h${i}`, { title: `conversation ${i}`, status: 'idle' })),
    ];
    await show(many, []);
    const full = await heights();
    assert.ok(Math.abs(full.tree - Math.round(H * 0.4)) <= 2, `thirty rows: the tree is capped at 40% (${full.tree} px of ${H})`);
    await show(many.slice(0, 4), []);
    const four = await heights();
    assert.ok(four.tree >= 24 + 4 * 40 && four.tree <= 24 + 4 * 40 + 8, `four rows: the tree is ${four.tree} px`);
  });
});
