// The built webview in headless chromium, driven through the scripted host
// (webview/dev/harness.ts): what it posts for each user action, what it shows for each
// host message. Skipped, with the reason, when chromium or playwright-core is missing.
import * as assert from 'node:assert/strict';
import type { HostToWebview, TranscriptEntry, TreeNode, WebviewToHost } from '../../src/protocol';
import { webviewFixture } from '../support/webview-fixture';

const SETTINGS = { sandbox: 'workspace-write', approval: 'ask', restricted: false, hasApiKey: true, modelSource: 'endpoint', model: 'deepseek-chat' } as const;
const T = '2025-06-01T09:00:00.000Z';

function node(id: string, parentId: string | undefined, extra: Partial<TreeNode> = {}): TreeNode {
  return {
    id,
    ...(parentId ? { parentId } : {}),
    origin: parentId ? 'subagent' : 'user',
    depth: id.split('.').length - 1,
    status: 'idle',
    tokens: { prompt: 1000, completion: 100, cacheHit: 500 },
    reports: 0,
    createdAt: T,
    ...extra,
  };
}

const ROOT = 's-root-1';
const CHILD = `${ROOT}.aaaaaa`;
const GRAND = `${CHILD}.bbbbbb`;
const OTHER = 's-other-2';
const NODES = [
  node(ROOT, undefined, { title: 'Root conversation', status: 'running', activity: 'thinking', activeSince: Date.now() - 5000 }),
  node(CHILD, ROOT, { label: 'child-worker', mode: 'continuable' }),
  node(GRAND, CHILD, { label: 'grand-worker', mode: 'one-shot', status: 'settled' }),
  node(OTHER, undefined, { title: 'Other conversation', createdAt: '2025-06-01T08:00:00.000Z' }),
];

const user = (seq: number, text: string, extra: Partial<Extract<TranscriptEntry, { kind: 'user' }>> = {}): TranscriptEntry => ({
  kind: 'user',
  seq,
  at: T,
  text,
  source: 'user',
  ...extra,
});
const assistant = (seq: number, text: string): TranscriptEntry => ({ kind: 'assistant', seq, at: T, text });

describe('webview panel in chromium (scripted host)', () => {
  const w = webviewFixture('arbor-webview-test-');
  const { send, posted, lastPosted, count, textOf } = w;
  const open = (query?: Record<string, string>) => w.open(query);

  const snapshot = (extra: Partial<Extract<HostToWebview, { type: 'state/snapshot' }>> = {}): HostToWebview => ({
    type: 'state/snapshot',
    nodes: NODES,
    settings: SETTINGS,
    approvals: [],
    ...extra,
  });

  it('announces itself with its view, and a transcript tab with its session', async () => {
    await open();
    assert.deepEqual((await posted())[0], { type: 'webview/ready', view: 'panel' });
    await open({ view: 'transcript', session: CHILD });
    assert.deepEqual((await posted())[0], { type: 'webview/ready', view: 'transcript', sessionId: CHILD });
    assert.equal(await count('[role=tree]'), 0, 'a transcript tab has no tree');
    // Its saved state names the session: VS Code gives it to the WebviewPanelSerializer after a
    // reload. (A fresh page, not open(): that clears the state the tab saves as it starts.)
    await w.open({ view: 'transcript', session: CHILD }, { keepState: true });
    await new Promise((r) => setTimeout(r, 300)); // saveState coalesces writes for 150 ms
    const state = await w.page.evaluate<{ sessionId?: string } | null>(
      `JSON.parse(sessionStorage.getItem('arbor-harness-state:transcript:${CHILD}') ?? 'null')`,
    );
    assert.equal(state?.sessionId, CHILD);
  });

  it('draws every session under its parent with a context-menu payload', async () => {
    await open();
    await send(snapshot());
    const rows = await w.page.evaluate<{ id: string; level: string; ctx: string }[]>(
      `[...document.querySelectorAll('[role=treeitem]')].map((r) => ({ id: r.dataset.rowId, level: r.getAttribute('aria-level'), ctx: r.dataset.vscodeContext }))`,
    );
    assert.deepEqual(
      rows.map((r) => [r.id, r.level]),
      [
        [ROOT, '1'],
        [CHILD, '2'],
        [GRAND, '3'],
        [OTHER, '1'],
      ],
    );
    assert.deepEqual(JSON.parse(rows[0].ctx), {
      webviewSection: 'treeNode',
      arborSessionId: ROOT,
      arborRunning: true,
      arborContinuable: true,
      arborCompactable: false,
      arborGoalOwner: true,
      preventDefaultContextMenuItems: true,
    });
    assert.equal(JSON.parse(rows[2].ctx).arborCompactable, false, 'a subagent is not compacted from the panel');
    assert.equal(JSON.parse(rows[2].ctx).arborGoalOwner, false, 'a subagent holds no goal');
    assert.equal(JSON.parse(rows[2].ctx).arborContinuable, false, 'a one-shot child takes no follow-up');
    // A delta replaces one node.
    await send({ type: 'tree/node', node: { ...NODES[1], status: 'failed', lastStopReason: 'error' } });
    assert.match(await textOf(`[data-row-id="${CHILD}"]`), /failed/);
  });

  // Issue 21.7: a workflow run node is drawn in the tree but the Sessions badge leaves it out.
  it('counts sessions, not workflow run nodes, in the Sessions badge', async () => {
    await open();
    const run = node('wf.r1', ROOT, { kind: 'workflow', origin: 'subagent', status: 'running' });
    const agent = node(`${ROOT}.wwwwww`, 'wf.r1', { label: 'wf-agent' });
    await send(snapshot({ nodes: [...NODES, run, agent] }));
    assert.equal(await count('[role=treeitem][data-row-id="wf.r1"]'), 1, 'the run is drawn');
    assert.equal((await textOf('vscode-badge[title="Sessions"]')).trim(), String(NODES.length + 1));
  });

  it('shows a subagent waiting for a free slot as queued, and as running once it has one', async () => {
    await open();
    await send(snapshot(), { type: 'tree/node', node: { ...NODES[1], status: 'queued', activity: 'waiting for a free slot', activeSince: Date.now() } });
    const row = `[data-row-id="${CHILD}"]`;
    assert.equal(await textOf(`${row} .status .word`), 'queued');
    assert.equal(await count(`${row} .status .codicon-clock`), 1);
    assert.match(await w.page.evaluate<string>(`document.querySelector('${row}').getAttribute('aria-label')`), /, queued/);
    assert.match(await textOf(`${row} .activity`), /waiting for a free slot/);
    await send({ type: 'tree/node', node: { ...NODES[1], status: 'running', activity: 'thinking', activeSince: Date.now() } });
    assert.equal(await textOf(`${row} .status .word`), 'running');
    assert.match(await w.page.evaluate<string>(`document.querySelector('${row}').getAttribute('aria-label')`), /, running/);
  });

  it('moves through the tree with the keyboard and selects with Enter', async () => {
    await open();
    await send(snapshot());
    await w.page.focus(`[data-row-id="${ROOT}"]`);
    await w.page.keyboard.press('ArrowDown');
    await w.page.keyboard.press('ArrowDown');
    assert.equal(await w.page.evaluate(`document.activeElement.dataset.rowId`), GRAND);
    await w.page.keyboard.press('ArrowLeft'); // a leaf: to its parent
    assert.equal(await w.page.evaluate(`document.activeElement.dataset.rowId`), CHILD);
    await w.page.keyboard.press('ArrowLeft'); // collapse
    assert.equal(await w.page.evaluate(`document.activeElement.getAttribute('aria-expanded')`), 'false');
    assert.equal(await count(`[data-row-id="${GRAND}"]`), 0);
    await w.page.keyboard.press('ArrowRight'); // expand
    assert.equal(await count(`[data-row-id="${GRAND}"]`), 1);
    await w.page.keyboard.press('End');
    assert.equal(await w.page.evaluate(`document.activeElement.dataset.rowId`), OTHER);
    await w.page.keyboard.press('Home');
    await w.page.keyboard.press('Enter');
    assert.deepEqual(await lastPosted(), { type: 'session/select', sessionId: ROOT, selection: 0 });
    assert.equal(await w.page.evaluate(`document.querySelector('[aria-selected=true]').dataset.rowId`), ROOT);
    assert.equal(await count('[role=treeitem][tabindex="0"]'), 1, 'one tab stop (roving tabindex)');
  });

  it('sends with Enter (not Shift+Enter) to the selected session, and to a new conversation when none is', async () => {
    await open();
    await send(snapshot({ selected: ROOT }), { type: 'transcript/reset', sessionId: ROOT, entries: [user(0, 'hi')], hasMore: false });
    await w.page.focus('vscode-textarea');
    await w.page.keyboard.type('first line');
    await w.page.keyboard.press('Shift+Enter');
    assert.equal((await posted()).filter((m) => m.type === 'chat/send').length, 0);
    await w.page.keyboard.type('second line');
    await w.page.keyboard.press('Enter');
    const sent = (await lastPosted()) as Extract<WebviewToHost, { type: 'chat/send' }>;
    assert.equal(sent.type, 'chat/send');
    assert.equal(sent.sessionId, ROOT);
    assert.equal(sent.text, 'first line\nsecond line');
    assert.match(sent.id, /^[0-9a-f-]{36}$/);
    assert.equal(await w.page.evaluate(`document.querySelector('vscode-textarea').value`), '');
    // The host's error comes back in words under the input, and the text is restored.
    await send({ type: 'request/done', id: sent.id, ok: false, error: 'Restricted Mode: Arbor is read-only.' });
    assert.match(await textOf('.composer [role=alert]'), /Sending your message failed: Restricted Mode/);
    assert.equal(await w.page.evaluate(`document.querySelector('vscode-textarea').value`), 'first line\nsecond line');

    await open();
    await send(snapshot());
    await w.page.focus('vscode-textarea');
    await w.page.keyboard.type('start something');
    await w.page.keyboard.press('Enter');
    const fresh = (await lastPosted()) as Extract<WebviewToHost, { type: 'chat/send' }>;
    assert.equal(fresh.type, 'chat/send');
    assert.equal('sessionId' in fresh, false, 'no session: a new conversation');
  });

  it('stops a running session, forks from a message, and tags messages for the context menu', async () => {
    await open();
    await send(snapshot({ selected: ROOT }), {
      type: 'transcript/reset',
      sessionId: ROOT,
      entries: [user(0, 'question'), assistant(1, 'answer')],
      hasMore: false,
    });
    await w.page.click('vscode-button:has-text("Stop")');
    const stop = (await lastPosted()) as Extract<WebviewToHost, { type: 'agent/interrupt' }>;
    assert.equal(stop.type, 'agent/interrupt');
    assert.equal(stop.sessionId, ROOT);
    await w.page.click('article[data-seq="1"] button.fork');
    const fork = (await lastPosted()) as Extract<WebviewToHost, { type: 'session/fork' }>;
    assert.deepEqual([fork.type, fork.sessionId, fork.seq], ['session/fork', ROOT, 1]);
    // A failure with a code the panel knows says what to do, under the error's own words.
    await send({ type: 'request/done', id: fork.id, ok: false, error: 'The store is locked by process 4242.', code: 'LOCKED' });
    assert.match(await textOf('.composer [role=alert]'), /Forking the conversation failed: The store is locked by process 4242\./);
    assert.match(await textOf('.composer [role=alert] .what-to-do'), /close it, then try again/);
    const ctx = await w.page.evaluate<string>(`document.querySelector('article[data-seq="1"]').dataset.vscodeContext`);
    assert.deepEqual(JSON.parse(ctx), {
      webviewSection: 'chatMessage',
      arborSessionId: ROOT,
      arborSeq: 1,
      arborView: 'panel',
      preventDefaultContextMenuItems: true,
    });
    // An idle session cannot be stopped.
    await send({ type: 'tree/node', node: { ...NODES[0], status: 'idle' } });
    assert.equal(await w.page.evaluate(`document.querySelector('vscode-button[title^="Stop"]').disabled`), true);
  });

  it('shows reports, settlements and runtime notices by provenance, and streams a live bubble', async () => {
    await open();
    await send(snapshot({ selected: ROOT }), {
      type: 'transcript/reset',
      sessionId: ROOT,
      entries: [
        user(0, 'Found it: the race.', { source: 'subagent-report', fromSession: CHILD }),
        user(1, '[subagent child-worker settled: completed]\nAll done.', { source: 'subagent-settled', fromSession: CHILD }),
        user(2, '[Arbor runtime] You are a subagent.', { source: 'delegation' }),
        { kind: 'turn', seq: 3, at: T, phase: 'end', stopReason: 'interrupted' },
      ],
      hasMore: false,
    });
    assert.match(await textOf('article.report'), /Report from child-worker/);
    assert.match(await textOf('article.settled'), /Runtime notice[\s\S]*child-worker[\s\S]*settled: completed/);
    assert.equal(await count('article.delegation'), 1);
    assert.match(await textOf('article.turn-end'), /Turn ended: Interrupted/);
    await send(
      { type: 'stream/delta', sessionId: ROOT, kind: 'text', delta: 'Hello ' },
      { type: 'stream/delta', sessionId: ROOT, kind: 'text', delta: '**world**' },
      { type: 'stream/delta', sessionId: OTHER, kind: 'text', delta: 'not here' },
    );
    assert.match(await textOf('article.live'), /Hello world/);
    assert.doesNotMatch(await textOf('article.live'), /not here/);
    await send({ type: 'transcript/append', sessionId: ROOT, entries: [assistant(4, 'Hello world')] });
    assert.equal(await count('article.live'), 0, 'the assistant entry replaces the stream');
  });

  it('follows the newest message when entries arrive a frame apart', async () => {
    await open();
    const entries = Array.from({ length: 6 }, (_, i) => (i % 2 ? assistant(i, `answer ${i}\n\n${'words '.repeat(60)}`) : user(i, `question ${i}`)));
    await send(snapshot({ selected: ROOT }), { type: 'transcript/reset', sessionId: ROOT, entries, hasMore: false });
    // Each append lands after the frame that scrolled to the previous one, before that
    // scroll's event is handled: growth below is not the user scrolling away.
    for (let seq = 6; seq < 14; seq++)
      await send({ type: 'transcript/append', sessionId: ROOT, entries: [assistant(seq, `late answer ${seq}\n\n${'more '.repeat(40)}`)] });
    for (let i = 0; i < 3; i++) await w.page.evaluate(`window.__host.frame()`);
    const fromBottom = await w.page.evaluate<number>(
      `(() => { const s = document.querySelector('.chat .scroller'); return s.scrollHeight - s.scrollTop - s.clientHeight; })()`,
    );
    assert.ok(fromBottom < 24, `the chat stays at the bottom (${fromBottom}px above it)`);
  });

  it('renders model text as text: no markup, no script, http(s) hrefs only', async () => {
    await open();
    const evil = '<img src=x onerror="window.__pwned=1"> [click](javascript:window.__pwned=2) [ok](https://example.com) <script>window.__pwned=3</script>';
    await send(snapshot({ selected: ROOT }), { type: 'transcript/reset', sessionId: ROOT, entries: [assistant(0, evil)], hasMore: false });
    assert.equal(await count('.md img, .md script'), 0);
    assert.deepEqual(await w.page.evaluate(`[...document.querySelectorAll('.md a')].map((a) => a.getAttribute('href'))`), ['https://example.com/']);
    assert.equal(await w.page.evaluate(`window.__pwned ?? null`), null);
    assert.match(await textOf('article[data-seq="0"] .md'), /<img src=x onerror=/);
  });

  it('answers approvals inline, tagged with the asking session and its lineage', async () => {
    await open();
    const prompt = { requestId: 'r1', sessionId: GRAND, lineage: [GRAND, CHILD, ROOT], tool: 'run_command', summary: 'npm test', reason: 'needs approval' };
    await send(
      snapshot({ selected: ROOT }),
      { type: 'transcript/reset', sessionId: ROOT, entries: [], hasMore: false },
      { type: 'approval/requested', prompt },
    );
    assert.match(await textOf('.approval'), /asked by grand-worker[\s\S]*Root conversation[\s\S]*child-worker[\s\S]*grand-worker/);
    await w.page.click('.approval vscode-button:has-text("Allow")');
    assert.deepEqual(await lastPosted(), { type: 'approval/answer', requestId: 'r1', decision: 'allow' });
    await send({ type: 'approval/resolved', requestId: 'r1', decision: 'allow' });
    assert.equal(await count('.approval'), 0);
  });

  it('shows the diff and the scope of a grant; allows for the conversation, denies with a reason, marks ancestors, revokes', async () => {
    await open();
    const preview = { kind: 'diff' as const, text: '--- a/.vscode/settings.json\n+++ b/.vscode/settings.json\n@@ -1,3 +1,3 @@\n {\n-  "a": 1\n+  "a": 2\n }' };
    const write = {
      requestId: 'w1',
      sessionId: ROOT,
      lineage: [ROOT],
      tool: 'write_file',
      summary: 'write_file: overwrite .vscode/settings.json (14 bytes)',
      reason: 'protected path',
      preview,
      grant: { kind: 'path' as const, value: '/ws/.vscode/settings.json' },
    };
    const cmd = {
      requestId: 'c1',
      sessionId: GRAND,
      lineage: [GRAND, CHILD, ROOT],
      tool: 'run_command',
      summary: '$ npm test',
      reason: 'commands',
      grant: { kind: 'command-prefix' as const, value: 'npm test' },
    };
    const marked = [
      node(ROOT, undefined, { title: 'Root conversation', pendingApprovals: 2 }),
      node(CHILD, ROOT, { label: 'child-worker', pendingApprovals: 1 }),
      node(GRAND, CHILD, { label: 'grand-worker', pendingApprovals: 1, status: 'approval', activity: 'waiting for approval' }),
    ];
    await send(
      snapshot({ selected: ROOT, nodes: [...marked, NODES[3]] }),
      { type: 'transcript/reset', sessionId: ROOT, entries: [], hasMore: false },
      { type: 'approval/requested', prompt: write },
      { type: 'approval/requested', prompt: cmd },
    );
    assert.equal(await count('.needs-you'), 3, 'the asker and each ancestor carry the mark');
    assert.equal(await textOf(`[data-row-id="${CHILD}"] .needs-you`), '1');
    // The asker's status says what it waits for: its shield icon on the row (issue 21.5), the
    // words for screen readers and on hover; and it can still be stopped.
    assert.equal(await textOf(`[data-row-id="${GRAND}"] .status .visually-hidden`), 'needs approval');
    assert.equal(await w.page.evaluate(`document.querySelector('[data-row-id="${GRAND}"] .status').title`), 'needs approval');
    assert.match(String(await w.page.evaluate(`document.querySelector('[data-row-id="${GRAND}"]').getAttribute('aria-label')`)), /needs approval/);
    const card = '.approval:has(.preview)';
    assert.equal(await count(`${card} .pl.del`), 1);
    assert.equal(await count(`${card} .pl.add`), 1);
    assert.match(await textOf(`${card} .pl.add`), /"a": 2/);
    assert.match(await textOf(`${card} .scope`), /write_file[\s\S]*\/ws\/.vscode\/settings.json/);
    await w.page.focus(`${card} .deny-reason`);
    await w.page.keyboard.type('keep tabs at 2');
    await w.page.click(`${card} .deny-button`);
    assert.deepEqual(await lastPosted(), { type: 'approval/answer', requestId: 'w1', decision: 'deny', reason: 'keep tabs at 2' });
    await w.page.click('.approval:not(:has(.preview)) .allow-conversation');
    assert.deepEqual(await lastPosted(), { type: 'approval/answer', requestId: 'c1', decision: 'allow', remember: true });
    const grant = { grantId: 'g1', tool: 'run_command', scope: { kind: 'command-prefix' as const, value: 'npm test' }, at: T };
    await send({ type: 'grants/list', sessionId: ROOT, grants: [grant] });
    assert.match(await textOf('.grants'), /Allowed for this conversation \(1\)[\s\S]*run_command[\s\S]*npm test/);
    await w.page.click('.grants .grant button:has-text("Revoke")');
    const revoke = (await lastPosted()) as Extract<WebviewToHost, { type: 'approval/revoke' }>;
    assert.deepEqual({ type: revoke.type, sessionId: revoke.sessionId, grantId: revoke.grantId }, { type: 'approval/revoke', sessionId: ROOT, grantId: 'g1' });
    await send({ type: 'grants/list', sessionId: ROOT, grants: [] });
    assert.equal(await count('.grants'), 0);
    // An ACP agent hears only reject_once: no reason is asked for that would reach nobody.
    const acpAsk = {
      requestId: 'a1',
      sessionId: CHILD,
      lineage: [CHILD, ROOT],
      tool: 'acp:edit',
      summary: 'Modify config',
      reason: 'asks first',
      reasonHeard: false as const,
    };
    await send({ type: 'approval/requested', prompt: acpAsk });
    const acpCard = '.approval:has(.no-reason)';
    assert.equal(await count(acpCard), 1);
    assert.equal(await count(`${acpCard} .deny-reason`), 0);
    assert.match(await textOf(`${acpCard} .no-reason`), /hears only that it was refused/);
    await w.page.click(`${acpCard} .deny-button`);
    assert.deepEqual(await lastPosted(), { type: 'approval/answer', requestId: 'a1', decision: 'deny' });
  });

  it('says so in Restricted Mode (the agent still chats, read-only) and hints at the API key', async () => {
    await open();
    await send(snapshot({ selected: ROOT, settings: { ...SETTINGS, restricted: true } }));
    assert.match(await textOf('.notice'), /Restricted Mode: Arbor is read-only/);
    assert.match(await textOf('.notice'), /not write\s+them or run commands/);
    assert.equal(await w.page.evaluate(`document.querySelector('vscode-textarea').disabled`), false);
    assert.match(String(await w.page.evaluate(`document.querySelector('vscode-textarea').placeholder`)), /Restricted Mode/);
    await send({ type: 'settings/changed', settings: { ...SETTINGS, hasApiKey: false, modelSource: 'none' } });
    assert.match(await textOf('.notice'), /Arbor: Set API Key/);
    assert.equal(await w.page.evaluate(`document.querySelector('vscode-textarea').disabled`), false);
  });

  it('renders a window of a long transcript and pages back on scroll-up', async () => {
    await open();
    const entries = Array.from({ length: 600 }, (_, i) => (i % 2 ? assistant(1000 + i, `answer ${i}`) : user(1000 + i, `question ${i}`)));
    await send(snapshot({ selected: ROOT }), { type: 'transcript/reset', sessionId: ROOT, entries, hasMore: true });
    const rendered = await count('article[data-seq]');
    assert.ok(rendered > 0 && rendered <= 160, `${rendered} of 600 rendered`);
    // Scroll to the top until the window has reached the first held entry and asked for more.
    for (let i = 0; i < 40; i++) {
      await w.page.evaluate(`document.querySelector('.scroller [role=log]').closest('.scroller').scrollTop = 0`);
      await w.page.evaluate(`window.__host.frame().then(() => window.__host.frame())`);
      if ((await posted()).some((m) => m.type === 'transcript/more')) break;
    }
    const more = (await posted()).find((m) => m.type === 'transcript/more') as Extract<WebviewToHost, { type: 'transcript/more' }>;
    assert.ok(more, 'transcript/more was posted');
    assert.equal(more.beforeSeq, 1000);
    assert.ok((await count('article[data-seq]')) <= 160, 'the window stays bounded');
    await send({
      type: 'request/done',
      id: more.id,
      ok: true,
      sessionId: ROOT,
      entries: [user(998, 'older question'), assistant(999, 'older answer')],
      hasMore: false,
    });
    await w.page.evaluate(`window.__host.frame()`);
    assert.equal(await count('article[data-seq="998"]'), 1, 'the older page is shown');
  });

  it('restores selection and collapsed nodes after being hidden (reloaded)', async () => {
    await open();
    await send(snapshot());
    await w.page.click(`[data-row-id="${CHILD}"] .twisty`);
    await w.page.click(`[data-row-id="${OTHER}"]`);
    await w.page.evaluate(`new Promise((r) => setTimeout(r, 300))`); // the state write is coalesced
    await w.page.reload({ waitUntil: 'load' });
    await w.page.waitForFunction(`window.__posted && window.__posted.some((m) => m.type === 'webview/ready')`);
    await send(snapshot());
    assert.deepEqual(await lastPosted(), { type: 'session/select', sessionId: OTHER, selection: 0, restored: true });
    assert.equal(await count(`[data-row-id="${GRAND}"]`), 0, 'still collapsed');
    assert.equal(await w.page.evaluate(`document.querySelector('[aria-selected=true]').dataset.rowId`), OTHER);
  });
});
