// The panel as a new user meets it (issue 8, points 8 and 9), in headless chromium through the
// scripted host: a narrow (300 px) panel cuts no card text, the jump-to-newest button never
// sits on the text, markdown tables render as tables, an empty panel lists example prompts, and
// the input shows the sandbox and approval mode in force.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TranscriptEntry, TreeNode } from '../../src/protocol';
import { webviewFixture } from '../support/webview-fixture';

const SETTINGS = { sandbox: 'workspace-write', approval: 'ask', restricted: false, hasApiKey: true, modelSource: 'endpoint', model: 'deepseek-chat' } as const;
const T = '2025-06-01T09:00:00.000Z';
const ROOT = 's-root-1';
const CHILD = `${ROOT}.aaaaaa`;
const node = (id: string, extra: Partial<TreeNode> = {}): TreeNode => ({
  id,
  origin: 'user',
  depth: 0,
  status: 'idle',
  tokens: { prompt: 1000, completion: 100, cacheHit: 500 },
  reports: 0,
  createdAt: T,
  ...extra,
});
const NODES = [
  node(ROOT, { title: 'Root conversation', lastStopReason: 'completed' }),
  node(CHILD, {
    parentId: ROOT,
    origin: 'subagent',
    depth: 1,
    label: 'tester',
    mode: 'continuable',
    status: 'settled',
    lastStopReason: 'completed',
    refused: 1,
  }),
];
const ARTIFACTS = path.join(__dirname, '..', '..', '..', 'test-artifacts', 'webview-layout');

describe('webview layout for a new user (chromium, scripted host)', () => {
  const w = webviewFixture('arbor-webview-layout-');
  const { send, posted, textOf, waitFor } = w;
  const open = (width = 420, height = 900) => w.open({ view: 'panel' }, { viewport: { width, height } });
  before(() => fs.mkdirSync(ARTIFACTS, { recursive: true }));

  it('at 300 px, no card cuts its text: notices, tool calls, tables and approval cards fit or scroll', async () => {
    await open(300, 900);
    const long = 'run_command `npm test --workspace packages/a-rather-long-package-name -- --grep "refusal outcomes"` (approval: never)';
    const entries: TranscriptEntry[] = [
      { kind: 'user', seq: 1, at: T, text: 'run the tests', source: 'user' },
      {
        kind: 'assistant',
        seq: 2,
        at: T,
        text: 'Results:\n\n| package | tests | status | notes |\n| --- | ---: | :---: | --- |\n| core | 412 | pass | all green |\n| webview | 37 | fail | layout at 300 px |\n',
        toolCalls: [{ id: 'c1', name: 'run_command', arguments: JSON.stringify({ command: 'npm test --workspace packages/a-rather-long-package-name' }) }],
      },
      {
        kind: 'tool',
        seq: 3,
        at: T,
        callId: 'c1',
        name: 'run_command',
        content: 'run_command: approval was refused: the approval policy is "never"',
        isError: true,
      },
      {
        kind: 'user',
        seq: 4,
        at: T,
        text: `[subagent tester settled: completed · 1 refused]\nFinished, but 1 action was refused: ${long}.\nI could not run the tests.`,
        source: 'subagent-settled',
        fromSession: CHILD,
      },
    ];
    const prompt = {
      requestId: 'r1',
      sessionId: ROOT,
      lineage: [ROOT],
      tool: 'run_command',
      summary: '$ npm test --workspace packages/a-rather-long-package-name -- --grep "refusal outcomes"',
      reason: 'commands are not confined to the workspace',
    };
    await send(
      { type: 'state/snapshot', nodes: NODES, selected: ROOT, settings: SETTINGS, approvals: [prompt] },
      { type: 'transcript/reset', sessionId: ROOT, entries, hasMore: false },
    );
    await w.page.screenshot({ path: path.join(ARTIFACTS, 'cards-300px.png'), fullPage: true });

    // The notice states the refusal in full (wrapped, not cut), in the warning style.
    const refusal = await textOf('article.settled .refusal');
    assert.ok(refusal.includes('Finished, but 1 action was refused') && refusal.includes('(approval: never)'), refusal);
    assert.match(await textOf('article.settled .fact'), /settled:\s*completed\s*·\s*1 refused/);
    // Every card lies inside the chat's width, and every text inside a card is either whole
    // (wraps) or inside a box that scrolls (code, tables): nothing is clipped away unseen.
    const problems = await w.page.evaluate<string[]>(`(() => {
      const out = [];
      const scroller = document.querySelector('.chat .scroller');
      if (scroller.scrollWidth > scroller.clientWidth + 1) out.push('the chat scrolls sideways: ' + scroller.scrollWidth + ' > ' + scroller.clientWidth);
      const cards = [...document.querySelectorAll('article.msg, .approval, details.tool')];
      if (cards.length < 4) out.push('only ' + cards.length + ' cards drawn');
      for (const card of cards) {
        const c = card.getBoundingClientRect();
        if (c.right > scroller.getBoundingClientRect().right + 1) out.push(card.className + ' overflows the chat by ' + Math.round(c.right - scroller.getBoundingClientRect().right) + ' px');
        for (const el of card.querySelectorAll('*')) {
          const st = getComputedStyle(el);
          const scrolls = st.overflowX === 'auto' || st.overflowX === 'scroll';
          if (scrolls) continue;
          // Clipped text without a way to read it: hidden overflow and no tooltip.
          if ((st.overflowX === 'hidden' || st.overflowX === 'clip') && el.scrollWidth > el.clientWidth + 1 && !el.closest('[title]') && !el.closest('summary')) {
            out.push('cut: <' + el.tagName.toLowerCase() + ' class="' + el.className + '"> ' + el.textContent.slice(0, 60));
          }
          const r = el.getBoundingClientRect();
          const box = el.parentElement && [...card.querySelectorAll('*')].find((b) => b.contains(el) && ['auto', 'scroll'].includes(getComputedStyle(b).overflowX));
          if (!box && r.width > 0 && r.right > c.right + 1) out.push('sticks out of its card: <' + el.tagName.toLowerCase() + ' class="' + el.className + '"> by ' + Math.round(r.right - c.right) + ' px');
        }
      }
      return out;
    })()`);
    assert.deepEqual(problems, []);
    // A markdown table is a real table (no {@html}): header, alignment, rows.
    const table = await w.page.evaluate<{ head: string[]; rows: string[][]; align: string }>(`(() => {
      const t = document.querySelector('article.assistant table');
      return { head: [...t.querySelectorAll('th')].map((x) => x.textContent.trim()), rows: [...t.querySelectorAll('tbody tr')].map((r) => [...r.children].map((x) => x.textContent.trim())), align: t.querySelector('tbody td:nth-child(2)').style.textAlign };
    })()`);
    assert.deepEqual(table.head, ['package', 'tests', 'status', 'notes']);
    assert.deepEqual(table.rows, [
      ['core', '412', 'pass', 'all green'],
      ['webview', '37', 'fail', 'layout at 300 px'],
    ]);
    assert.equal(table.align, 'right');
    // The refused child's node says so, in words.
    assert.match(await textOf(`[data-row-id="${CHILD}"] .refused`), /completed · 1 refused/);
    assert.match(String(await w.page.evaluate(`document.querySelector('[data-row-id="${CHILD}"]').getAttribute('aria-label')`)), /^tester, settled, 1 refused/);
  });

  it('the jump-to-newest button sits below the text, never on it', async () => {
    await open(300, 500);
    const entries: TranscriptEntry[] = Array.from({ length: 60 }, (_, i) =>
      i % 2
        ? { kind: 'assistant', seq: i + 1, at: T, text: `answer ${i}: ${'words that wrap across the narrow panel '.repeat(3)}` }
        : { kind: 'user', seq: i + 1, at: T, text: `question ${i}`, source: 'user' },
    );
    await send(
      { type: 'state/snapshot', nodes: NODES, selected: ROOT, settings: SETTINGS, approvals: [] },
      { type: 'transcript/reset', sessionId: ROOT, entries, hasMore: false },
    );
    // At the bottom first (a scroll event there), then up: the user leaves the newest message.
    await w.page.evaluate(`(async () => {
      const s = document.querySelector('.chat .scroller');
      s.scrollTop = s.scrollHeight;
      await window.__host.frame(); await window.__host.frame();
      for (let k = 0; k < 5; k++) { s.scrollTop -= 150; await window.__host.frame(); await window.__host.frame(); }
    })()`);
    const where = await w.page.evaluate<string>(
      `(() => { const s = document.querySelector('.chat .scroller'); return [s.scrollTop, s.scrollHeight, s.clientHeight, document.querySelectorAll('article').length].join(' '); })()`,
    );
    await waitFor(`!!document.querySelector('.jump')`, `the jump button after scrolling up (scrollTop scrollHeight clientHeight articles: ${where})`);
    await w.page.screenshot({ path: path.join(ARTIFACTS, 'jump-button.png') });
    const geo = await w.page.evaluate<{ jumpTop: number; scrollerBottom: number; covered: number }>(`(() => {
      const j = document.querySelector('.jump').getBoundingClientRect();
      const s = document.querySelector('.chat .scroller').getBoundingClientRect();
      // Any text element of the transcript under the button's box?
      let covered = 0;
      for (const el of document.querySelectorAll('.scroller article *')) {
        const r = el.getBoundingClientRect();
        if (el.childElementCount === 0 && r.bottom > j.top && r.top < j.bottom && r.right > j.left && r.left < j.right && r.bottom <= s.bottom && r.top >= s.top) covered++;
      }
      return { jumpTop: j.top, scrollerBottom: s.bottom, covered };
    })()`);
    assert.ok(geo.jumpTop >= geo.scrollerBottom - 0.5, `the button (top ${geo.jumpTop}) is below the scrolled text (bottom ${geo.scrollerBottom})`);
    assert.equal(geo.covered, 0);
    await w.page.click('.jump');
    await waitFor(
      `(() => { const s = document.querySelector('.chat .scroller'); return s.scrollHeight - s.scrollTop - s.clientHeight < 4; })()`,
      'the chat at the newest message after the jump',
    );
  });

  it('an empty panel offers the example prompts; the input shows the mode in force and opens the picker', async () => {
    await open();
    const prompts = ['survey the workspace', 'fork a reviewer', 'start a long task'];
    const goal = { text: 'tidy the workspace', goalRounds: 2 };
    await send({ type: 'state/snapshot', nodes: [], settings: { ...SETTINGS, examplePrompts: [...prompts.map((text) => ({ text })), goal] }, approvals: [] });
    const shown = await w.page.evaluate<string[]>(`[...document.querySelectorAll('.examples button')].map((b) => b.textContent.trim())`);
    assert.deepEqual(shown, [...prompts, 'Goal: tidy the workspace (2 rounds)']);
    assert.match(await textOf('.composer .mode'), /workspace-write\s*·\s*approval: ask/);
    await w.page.click('.examples button:has-text("fork a reviewer")');
    const sent = (await posted()).filter((m) => m.type === 'chat/send');
    assert.equal(sent.length, 1);
    assert.equal(sent[0].type === 'chat/send' && sent[0].text, 'fork a reviewer');
    assert.equal(sent[0].type === 'chat/send' && sent[0].sessionId, undefined, 'an example starts a new conversation');
    // A goal button asks for a new conversation with that goal (armed by the host: a human's click).
    await w.page.click('.examples button:has-text("Goal: tidy the workspace")');
    const started = (await posted()).filter((m) => m.type === 'goal/start');
    assert.equal(started.length, 1);
    assert.deepEqual(started[0].type === 'goal/start' && { objective: started[0].objective, maxRounds: started[0].maxRounds }, {
      objective: 'tidy the workspace',
      maxRounds: 2,
    });
    assert.equal((await posted()).filter((m) => m.type === 'chat/send').length, 1, 'a goal button sends no chat message');

    // A session's own switch wins over the settings; the indicator opens the picker for it.
    await send(
      { type: 'tree/node', node: node(ROOT, { title: 'Root conversation', policy: { approval: 'never' } }) },
      { type: 'session/selected', sessionId: ROOT, selection: 1 },
    );
    assert.match(await textOf('.composer .mode'), /workspace-write\s*·\s*approval: never/);
    await w.page.click('.composer .mode');
    assert.deepEqual((await posted()).at(-1), { type: 'policy/pick', sessionId: ROOT });
    // "+" (draft/start): nothing selected, the examples are back.
    await send({ type: 'draft/start', selection: 2 });
    assert.equal(await w.page.evaluate<number>(`document.querySelectorAll('.examples button').length`), 4);
  });

  it('the mode indicator says whether the OS sandbox confines commands, and warns when none can start', async () => {
    await open();
    const active = { active: true, detail: 'commands run in an OS sandbox (bubblewrap, bwrap)', network: false };
    await send({ type: 'state/snapshot', nodes: [], settings: { ...SETTINGS, osSandbox: active }, approvals: [] });
    assert.match(await textOf('.composer .mode'), /workspace-write\s*·\s*approval: ask\s*·\s*OS sandbox\s*$/);
    assert.match(await w.page.evaluate<string>(`document.querySelector('.composer .mode').title`), /Commands run in the OS sandbox, without network/);
    assert.equal(await w.page.evaluate<number>(`document.querySelectorAll('.composer .mode .unconfined').length`), 0);

    const missing = { active: false, detail: 'no OS sandbox: bubblewrap (bwrap) is not installed; install bubblewrap', network: false };
    await send({ type: 'settings/changed', settings: { ...SETTINGS, osSandbox: missing } });
    assert.match(await textOf('.composer .mode .unconfined'), /^no OS sandbox$/);
    assert.match(
      await w.page.evaluate<string>(`document.querySelector('.composer .mode').title`),
      /bubblewrap \(bwrap\) is not installed; install bubblewrap\. Every command needs approval/,
    );

    // full-access runs commands unconfined by choice: nothing to warn about.
    await send({ type: 'settings/changed', settings: { ...SETTINGS, sandbox: 'full-access', osSandbox: missing } });
    assert.match(await textOf('.composer .mode'), /full-access\s*·\s*approval: ask\s*$/);
  });
});
