// The built webview in headless chromium, driven through the scripted host: after a reload the
// panel restores the session it showed — but not over a conversation the user started from the
// draft before the host's snapshot came (the host was still opening). The host selects that new
// conversation; restoring the old one crossed it, and the panel showed the new session while the
// host sent it the old one's: its reply never shown, its message "Queued" for ever.
import * as assert from 'node:assert/strict';
import type { TreeNode, WebviewToHost } from '../../src/protocol';
import { webviewFixture } from '../support/webview-fixture';

const SETTINGS = { sandbox: 'workspace-write', approval: 'ask', restricted: false, hasApiKey: true, modelSource: 'endpoint', model: 'deepseek-chat' } as const;
const T = '2025-06-01T09:00:00.000Z';
const OLD = 's-mqx1a2-old001';
const NEW = 's-mqx1b3-new002';

const node = (id: string, title: string): TreeNode => ({
  id,
  origin: 'user',
  depth: 0,
  status: 'idle',
  title,
  tokens: { prompt: 0, completion: 0, cacheHit: 0 },
  reports: 0,
  createdAt: T,
});

describe('webview in chromium: the selection restored after a reload', () => {
  const w = webviewFixture('arbor-webview-restore-');
  const { send, posted } = w;

  /** The panel showed OLD, then reloads (its saved state kept) and announces itself again. */
  const reloadShowingOld = async () => {
    await w.open({ view: 'panel' });
    await send(
      { type: 'state/snapshot', nodes: [node(OLD, 'old conversation')], selected: OLD, settings: SETTINGS, approvals: [] },
      { type: 'transcript/reset', sessionId: OLD, entries: [], hasMore: false },
    );
    await new Promise((r) => setTimeout(r, 400)); // the view state is written within 150 ms
    await w.page.reload();
    await w.waitFor(`(window.__posted ?? []).some((m) => m.type === 'webview/ready')`, 'the reloaded view to announce itself');
  };
  const selects = async () => (await posted()).filter((m): m is Extract<WebviewToHost, { type: 'session/select' }> => m.type === 'session/select');

  it('restores the saved selection when the user did nothing before the snapshot', async () => {
    await reloadShowingOld();
    await send({ type: 'state/snapshot', nodes: [node(OLD, 'old conversation')], settings: SETTINGS, approvals: [] });
    assert.deepEqual(await selects(), [{ type: 'session/select', sessionId: OLD }]);
  });

  it('a message sent from the draft before the snapshot: the new conversation stays shown, the old one is not restored over it', async () => {
    await reloadShowingOld();
    // The host is still opening (no snapshot yet): the user types and sends from the draft.
    await w.page.focus('vscode-textarea');
    await w.page.keyboard.type('hello after the reload');
    await w.page.keyboard.press('Enter');
    const sent = (await posted()).find((m) => m.type === 'chat/send');
    assert.ok(sent && sent.type === 'chat/send' && sent.sessionId === undefined, `a new conversation is asked for: ${JSON.stringify(sent)}`);
    // The snapshot (no selection yet), then the host's selection of the conversation it made.
    await send(
      { type: 'state/snapshot', nodes: [node(OLD, 'old conversation')], settings: SETTINGS, approvals: [] },
      { type: 'tree/node', node: node(NEW, 'hello after the reload') },
      { type: 'session/selected', sessionId: NEW },
      { type: 'transcript/reset', sessionId: NEW, entries: [], hasMore: false },
      {
        type: 'transcript/append',
        sessionId: NEW,
        entries: [
          { kind: 'user', seq: 1, at: T, text: 'hello after the reload', source: 'user' },
          { kind: 'assistant', seq: 2, at: T, text: 'Hello, after the reload.' },
        ],
      },
    );
    assert.deepEqual(await selects(), [], 'the panel did not ask the host for the old conversation');
    assert.equal(await w.page.evaluate(`document.querySelector('[aria-selected=true]')?.dataset.rowId`), NEW);
    assert.match(await w.textOf('.chat-pane'), /Hello, after the reload\./);
  });
});
