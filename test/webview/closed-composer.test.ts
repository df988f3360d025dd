// Issue 21.6 in the built webview (headless chromium, scripted host): a session that takes no
// messages — a one-shot child (built-in or a remote program's run) or a mirrored sub-session of
// an ACP agent — says so in its composer before anything is typed, in names (no session id, no
// advice meant for the model), and offers "Message the parent", which shows the nearest session
// above that takes messages and puts the keyboard in its input; a message the host refused
// because its session takes none is not left in the input after a restart.
import * as assert from 'node:assert/strict';
import type { TreeNode, WebviewToHost } from '../../src/protocol';
import { webviewFixture } from '../support/webview-fixture';

const SETTINGS = { sandbox: 'workspace-write', approval: 'ask', restricted: false, hasApiKey: true, modelSource: 'endpoint', model: 'deepseek-chat' } as const;
const T = '2025-06-01T09:00:00.000Z';
const ROOT = 's-mqx1a2-k3j4h5';
const FORK = `${ROOT}.f0rk01`;
const CLAUDE = `${ROOT}.c1aude`;
const ACP = `${ROOT}.acp001`;
const MIRROR = `${ACP}.m1rr0r`;
const LATE = `${ROOT}.1ate01`;
const node = (id: string, extra: Partial<TreeNode> = {}): TreeNode => ({
  id,
  origin: 'subagent',
  depth: 1,
  parentId: ROOT,
  status: 'settled',
  lastStopReason: 'completed',
  tokens: { prompt: 100, completion: 10, cacheHit: 0 },
  reports: 0,
  createdAt: T,
  ...extra,
});
const NODES: TreeNode[] = [
  node(ROOT, { origin: 'user', depth: 0, parentId: undefined, title: 'Plan the release', status: 'idle' }),
  node(FORK, { origin: 'fork', label: 'reviewer', mode: 'one-shot' }),
  node(CLAUDE, { label: 'claude helper', mode: 'one-shot', remote: { program: 'claude-code', version: '2.1.332 (Claude Code)' } }),
  node(ACP, { label: 'config fixer', mode: 'one-shot', remote: { program: 'acp:example' } }),
  node(MIRROR, { parentId: ACP, depth: 2, label: 'schema checker', remote: { program: 'acp:example', announcedBy: ACP } }),
  // The host learns it takes no messages only when it refuses one (no mode on the node).
  node(LATE, { label: 'late helper' }),
];

describe('webview: sessions that take no messages (issue 21.6)', () => {
  const w = webviewFixture('arbor-webview-closed-');
  const { send, posted, lastPosted, count, textOf } = w;
  const open = () => w.open({ view: 'panel' }, { viewport: { width: 300, height: 800 } });
  /** A restart of the view: the page reloads in its tab (its saved state kept), and announces itself again. */
  const restart = async () => {
    await new Promise((r) => setTimeout(r, 400)); // the view state is written within 150 ms
    await w.page.reload();
    await w.waitFor(`(window.__posted ?? []).some((m) => m.type === 'webview/ready')`, 'the reloaded view to announce itself');
  };
  const show = (selected: string) =>
    send(
      { type: 'state/snapshot', nodes: NODES, selected, settings: SETTINGS, approvals: [] },
      { type: 'transcript/reset', sessionId: selected, entries: [], hasMore: false },
    );
  const inputValue = () => w.page.evaluate<string | null>(`document.querySelector('.composer vscode-textarea')?.value ?? null`);

  for (const [what, id, name, words, parent] of [
    ['a one-shot fork', FORK, 'reviewer', /one-shot subagent: it ran its one task and takes no messages/, 'Plan the release'],
    ['a remote one-shot child', CLAUDE, 'claude helper', /was one run of claude-code: it takes no messages/, 'Plan the release'],
    // Its parent, the ACP child, is one-shot too: the conversation above both is the one to write to.
    ['a mirrored ACP sub-session', MIRROR, 'schema checker', /acp:example's own sub-session, shown here read-only: it takes no messages/, 'Plan the release'],
  ] as const) {
    it(`${what}: the composer says it takes no messages, and "Message the parent" opens the parent's input`, async () => {
      await open();
      // Something typed earlier, on the conversation: it is kept, and comes back with the parent.
      await show(ROOT);
      await w.page.focus('vscode-textarea');
      await w.page.keyboard.type('and what about the docs?');
      await w.page.click(`[role=treeitem][data-row-id="${id}"]`);
      await send({ type: 'transcript/reset', sessionId: id, entries: [], hasMore: false });

      const note = await textOf('.composer .closed');
      assert.match(note, words);
      assert.ok(note.includes(`“${name}”`), note);
      assert.ok(note.includes(`To follow up, message “${parent}”.`), note);
      for (const bad of [ROOT, id, 's-', 'continuable', 'follow-ups', 'Start a'])
        assert.ok(!note.includes(bad), `the note says ${JSON.stringify(bad)}: ${note}`);
      assert.equal(await count('.composer vscode-textarea'), 0, 'no input to type into');
      assert.equal(
        await w.page.evaluate<number>(`[...document.querySelectorAll('.composer vscode-button')].filter((b) => b.textContent.includes('Send')).length`),
        0,
        'no Send',
      );

      await w.page.click('.composer vscode-button.message-parent');
      const sel = (await lastPosted()) as Extract<WebviewToHost, { type: 'session/select' }>;
      assert.deepEqual([sel.type, sel.sessionId], ['session/select', ROOT]);
      await w.waitFor(`document.querySelector('.chat .head .name')?.textContent.trim() === 'Plan the release'`, "the conversation's chat");
      await w.waitFor(`document.activeElement?.tagName === 'VSCODE-TEXTAREA'`, "the keyboard in the conversation's input");
      assert.equal(await inputValue(), 'and what about the docs?');
      assert.equal(await count('.composer .closed'), 0);
      assert.equal((await posted()).filter((m) => m.type === 'chat/send').length, 0, 'nothing was sent to the closed session');
    });
  }

  it('a message refused because its session takes none: said in names, kept for now, gone after a restart', async () => {
    await open();
    await show(LATE);
    await w.page.focus('vscode-textarea');
    await w.page.keyboard.type('one more thing');
    await w.page.keyboard.press('Enter');
    const sent = (await lastPosted()) as Extract<WebviewToHost, { type: 'chat/send' }>;
    assert.deepEqual([sent.type, sent.sessionId], ['chat/send', LATE]);
    await send({
      type: 'request/done',
      id: sent.id,
      ok: false,
      error: `${LATE} is a one-shot subagent: it takes no follow-ups. Start a continuable one.`,
      code: 'NOT_CONTINUABLE',
    });
    const problem = await textOf('.composer [role=alert]');
    assert.match(problem, /Sending your message failed: “late helper” takes no messages\./);
    assert.match(problem, /ask its parent instead/);
    for (const bad of [LATE, 'continuable one']) assert.ok(!problem.includes(bad), `the error says ${JSON.stringify(bad)}: ${problem}`);
    // Kept in this view's life (it can go to the parent)...
    assert.equal(await inputValue(), 'one more thing');
    // ...but a restart does not bring it back from the view's saved state.
    await restart();
    await show(LATE);
    assert.equal(await inputValue(), '');
  });

  it('a message refused for another reason is kept across a restart (nothing a user wrote is lost)', async () => {
    await open();
    await show(ROOT);
    await w.page.focus('vscode-textarea');
    await w.page.keyboard.type('keep me');
    await w.page.keyboard.press('Enter');
    const sent = (await lastPosted()) as Extract<WebviewToHost, { type: 'chat/send' }>;
    await send({ type: 'request/done', id: sent.id, ok: false, error: 'The store is locked by process 4242.', code: 'LOCKED' });
    await restart();
    await show(ROOT);
    assert.equal(await inputValue(), 'keep me');
  });
});
