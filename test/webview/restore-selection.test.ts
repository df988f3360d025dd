// The built webview in headless chromium, driven through the scripted host: after a reload the
// panel restores the session it showed, as a restore numbered with the snapshot's selection
// (decision 0120) — and a conversation the user started from the draft before the snapshot came
// (the host was still opening), which the host selects with a newer number, wins over it: the
// panel ends on the new conversation, whatever order the two crossed in.
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
    await send({ type: 'state/snapshot', nodes: [node(OLD, 'old conversation')], settings: SETTINGS, approvals: [], selection: 4 });
    assert.deepEqual(await selects(), [{ type: 'session/select', sessionId: OLD, selection: 4, restored: true }]);
  });

  it('a host selection numbered older than the one the panel adopted is not shown; a newer one is', async () => {
    await w.open({ view: 'panel' });
    const two = [node(OLD, 'old conversation'), node(NEW, 'new conversation')];
    await send({ type: 'state/snapshot', nodes: two, selected: NEW, settings: SETTINGS, approvals: [], selection: 7 });
    const shown = () => w.page.evaluate(`document.querySelector('[aria-selected=true]')?.dataset.rowId ?? null`);
    assert.equal(await shown(), NEW);
    await send({ type: 'session/selected', sessionId: OLD, selection: 6 }, { type: 'draft/start', selection: 5 });
    assert.equal(await shown(), NEW, 'selections the host numbered before the snapshot crossed it: ignored');
    await send({ type: 'session/selected', sessionId: OLD, selection: 8 });
    assert.equal(await shown(), OLD);
  });

  it("a message sent from the draft before the snapshot: the restore is numbered with the snapshot, and the host's newer selection of the new conversation wins", async () => {
    await reloadShowingOld();
    // The host is still opening (no snapshot yet): the user types and sends from the draft.
    await w.page.focus('vscode-textarea');
    await w.page.keyboard.type('hello after the reload');
    await w.page.keyboard.press('Enter');
    const sent = (await posted()).find((m) => m.type === 'chat/send');
    assert.ok(sent && sent.type === 'chat/send' && sent.sessionId === undefined, `a new conversation is asked for: ${JSON.stringify(sent)}`);
    // The snapshot (no selection yet): the panel restores OLD, numbered with the snapshot's
    // selection; then the host's selection of the conversation it made, numbered after it.
    await send({ type: 'state/snapshot', nodes: [node(OLD, 'old conversation')], settings: SETTINGS, approvals: [], selection: 1 });
    assert.deepEqual(await selects(), [{ type: 'session/select', sessionId: OLD, selection: 1, restored: true }]);
    const sentAgain = (await posted()).filter((m) => m.type === 'chat/send');
    assert.equal(sentAgain.length, 1, 'the restore sent nothing');
    await send(
      { type: 'tree/node', node: node(NEW, 'hello after the reload') },
      { type: 'session/selected', sessionId: NEW, selection: 2 },
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
    assert.equal(await w.page.evaluate(`document.querySelector('[aria-selected=true]')?.dataset.rowId`), NEW);
    assert.match(await w.textOf('.chat-pane'), /Hello, after the reload\./);
  });
});

describe('webview in chromium: a message refused because the selection moved (decision 0120)', () => {
  const w = webviewFixture('arbor-webview-selseq-');
  const { send, posted } = w;
  const inputValue = () => w.page.evaluate<string | null>(`document.querySelector('.composer vscode-textarea')?.value ?? null`);
  const sends = async () => (await posted()).filter((m): m is Extract<WebviewToHost, { type: 'chat/send' }> => m.type === 'chat/send');

  it("carries the selection it was composed under; refused, its text comes back ahead of what was typed since, and the panel shows the host's choice", async () => {
    await w.open({ view: 'panel' });
    await send({
      type: 'state/snapshot',
      nodes: [node(OLD, 'old conversation'), node(NEW, 'new conversation')],
      selected: OLD,
      settings: SETTINGS,
      approvals: [],
      selection: 3,
    });
    await w.page.focus('vscode-textarea');
    await w.page.keyboard.type('first words');
    await w.page.keyboard.press('Enter');
    const [sent] = await sends();
    assert.deepEqual([sent.sessionId, sent.text, sent.selection], [OLD, 'first words', 3]);
    await w.page.keyboard.type('typed after');
    // The host had selected NEW (a command) before the send arrived: it says so, then refuses the send.
    await send(
      { type: 'session/selected', sessionId: NEW, selection: 4 },
      {
        type: 'request/done',
        id: sent.id,
        ok: false,
        error: `The panel switched to ${NEW} while this was on its way to ${OLD}; nothing was done. It is still in the input: send it again to ${NEW}, or select ${OLD} first.`,
        code: 'SELECTION_CHANGED',
      },
    );
    assert.equal(await w.page.evaluate(`document.querySelector('[aria-selected=true]')?.dataset.rowId`), NEW);
    assert.equal(await inputValue(), 'first words\n\ntyped after', 'nothing typed is lost');
    const problem = await w.textOf('.composer [role=alert]');
    assert.match(problem, /switched to “new conversation” while this was on its way to “old conversation”; nothing was done/);
    assert.match(problem, /Check the conversation now shown/);
    for (const id of [OLD, NEW]) assert.ok(!problem.includes(id), `the error says an id: ${problem}`);
    // Sent again, it goes to what the panel shows, under the number it adopted.
    await w.page.focus('vscode-textarea');
    await w.page.keyboard.press('Enter');
    const again = (await sends()).at(-1)!;
    assert.deepEqual([again.sessionId, again.text, again.selection], [NEW, 'first words\n\ntyped after', 4]);
  });
  it("the worktree bar's actions on the shown child carry the selection's number (the host refuses one the panel switched away from)", async () => {
    await w.open({ view: 'panel' });
    const child: TreeNode = { ...node(NEW, 'a worktree child'), worktree: { state: 'open', branch: 'arbor/wt-000001' } };
    await send(
      { type: 'state/snapshot', nodes: [node(OLD, 'old conversation'), child], selected: NEW, settings: SETTINGS, approvals: [], selection: 9 },
      { type: 'transcript/reset', sessionId: NEW, entries: [], hasMore: false },
    );
    await w.waitFor(`!!document.querySelector('.worktree-bar button.discard')`, 'the worktree bar');
    await w.click('.worktree-bar button.discard');
    await w.waitFor(`(window.__posted ?? []).some((m) => m.type === 'worktree/discard')`, 'the discard');
    const discard = (await posted()).find((m) => m.type === 'worktree/discard');
    assert.deepEqual({ ...discard, id: undefined }, { type: 'worktree/discard', id: undefined, sessionId: NEW, selection: 9 });
  });

  it("Fork and Rewind… from a message carry the selection's number: the fork, the preview and the apply", async () => {
    await w.open({ view: 'panel' });
    await send(
      { type: 'state/snapshot', nodes: [node(OLD, 'old conversation'), node(NEW, 'shown')], selected: NEW, settings: SETTINGS, approvals: [], selection: 9 },
      { type: 'transcript/reset', sessionId: NEW, entries: [{ kind: 'user', seq: 0, at: T, text: 'please do it', source: 'user' }], hasMore: false },
    );
    const last = async (type: string) => [...(await posted())].reverse().find((m) => m.type === type) as (WebviewToHost & { id: string }) | undefined;
    await w.waitFor(`!!document.querySelector('.msg button.fork')`, 'the message actions');
    await w.click('.msg button.fork');
    await w.waitFor(`(window.__posted ?? []).some((m) => m.type === 'session/fork')`, 'the fork');
    assert.deepEqual({ ...(await last('session/fork')), id: undefined }, { type: 'session/fork', id: undefined, sessionId: NEW, seq: 0, selection: 9 });
    await w.click('.msg button.rewind');
    await w.waitFor(`!!document.querySelector('section.rewind vscode-button')`, 'the rewind dialog');
    await w.click('section.rewind .buttons vscode-button');
    await w.waitFor(`(window.__posted ?? []).some((m) => m.type === 'rewind/preview')`, 'the preview');
    const preview = await last('rewind/preview');
    assert.deepEqual({ ...preview, id: undefined }, { type: 'rewind/preview', id: undefined, sessionId: NEW, seq: 0, subtree: false, selection: 9 });
    // A host selection newer than the dialog's (the user clicked away and back): the apply carries the number of its click.
    await send(
      { type: 'request/done', id: preview!.id, ok: true, preview: { token: 'tok1', undo: false, files: [] } },
      { type: 'session/selected', sessionId: NEW, selection: 11 },
    );
    await w.waitFor(`!!document.querySelector('section.rewind vscode-button.apply')`, 'the apply button');
    await w.click('section.rewind vscode-button.apply');
    await w.waitFor(`(window.__posted ?? []).some((m) => m.type === 'rewind/apply')`, 'the apply');
    assert.deepEqual(
      { ...(await last('rewind/apply')), id: undefined },
      { type: 'rewind/apply', id: undefined, sessionId: NEW, seq: 0, what: 'files', token: 'tok1', choices: [], selection: 11 },
    );
  });
});
