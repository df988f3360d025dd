// The panel's selection is numbered by the host (decision 0120): the races a user (or a hostile
// view) can make between the panel's choice and the host's, over a real harness and model server.
// Whatever crosses, the panel ends on the session its port is sent, and a message composed under
// a selection that moved elsewhere reaches no session: it is refused with a code, its text kept.
import assert from 'node:assert/strict';
import { ACTS_ON_SELECTION, isWebviewToHost } from '../../src/extension/validate-message';
import type { HostToWebview, RequestMessage, RequestType, SelectionBound } from '../../src/protocol';
import { initRepo } from '../core/worktree/fixture';
import type { FakePort } from '../support/fake-port';
import { until } from '../support/harness';
import { panelPerTest } from '../support/panel';

/** What a panel that follows the protocol shows: the host's selection with the newest number (the webview's rule, host-messages.ts). */
function adopted(port: FakePort): { sessionId: string | undefined; selection: number } {
  let now: { sessionId: string | undefined; selection: number } = { sessionId: undefined, selection: 0 };
  for (const m of port.got as HostToWebview[]) {
    if (m.type === 'state/snapshot' && (m.selection ?? 0) >= now.selection) now = { sessionId: m.selected, selection: m.selection ?? 0 };
    if (m.type === 'session/selected' && m.selection > now.selection) now = { sessionId: m.sessionId, selection: m.selection };
    if (m.type === 'draft/start' && m.selection > now.selection) now = { sessionId: undefined, selection: m.selection };
  }
  return now;
}

describe('extension: the panel selection sequence (decision 0120)', () => {
  const w = panelPerTest({ panel: false });
  /** The code of a refused request's answer (undefined: it succeeded, or has not come). */
  const refused = (port: FakePort, id: string) => {
    const d = port.done(id);
    return d && !d.ok ? d.code : undefined;
  };
  const userTexts = (id: string) => w.t.h.resident(id)!.session.events.flatMap((e) => (e.type === 'user/message' ? [e.text] : []));

  it('a click crossing a host selection: both sides end on the click, and a message composed after it goes there', async () => {
    const port = await w.view('panel');
    const a = (await w.t.h.createSession()).id;
    const b = (await w.t.h.createSession()).id;
    const under = adopted(port).selection;
    // The host reveals B (a command, the tree view) while the user's click on A is on its way.
    w.c.selectEverywhere(b);
    // The user typed into A right after the click, before hearing of either number; the two
    // messages arrive back to back (the click's handler still awaiting when the send comes).
    w.server.enqueue({ text: 'answered in A' });
    const clicked = w.c.receive(port, { type: 'session/select', sessionId: a, selection: under });
    await w.c.receive(port, { type: 'chat/send', id: 's1', sessionId: a, text: 'for A', selection: under });
    await clicked;
    assert.deepEqual(adopted(port).sessionId, a, 'the panel ends on its click, made last');
    assert.equal(port.sessionId, a, 'and is sent that session');
    assert.equal(port.sessionOf('s1'), a, 'the send, composed after the click, was not refused');
    await w.t.h.settle();
    assert.deepEqual(userTexts(a), ['for A']);
    assert.deepEqual(userTexts(b), [], 'nothing reached the session the host had selected');
  });

  it('a send composed before a host selection, arriving after it: refused with a code, no session gets it', async () => {
    const port = await w.view('panel');
    const a = (await w.t.h.createSession()).id;
    const b = (await w.t.h.createSession()).id;
    await w.c.receive(port, { type: 'session/select', sessionId: a, selection: adopted(port).selection });
    const under = adopted(port).selection;
    w.c.selectEverywhere(b); // crosses the send below
    const requests = w.server.requests.length;
    await w.c.receive(port, { type: 'chat/send', id: 's1', sessionId: a, text: 'meant for what the panel showed', selection: under });
    const done = port.done('s1');
    assert.ok(done && !done.ok, JSON.stringify(done));
    assert.equal(done.code, 'SELECTION_CHANGED');
    assert.match(done.error, /nothing was done.*still in the input/);
    // The panel heard the host's selection before the refusal: it shows B when it puts the text back.
    const selectedAt = port.got.map((m) => m.type === 'session/selected' && m.sessionId === b).lastIndexOf(true);
    assert.ok(selectedAt >= 0 && selectedAt < port.got.indexOf(done));
    assert.deepEqual(adopted(port).sessionId, b);
    await w.t.h.settle();
    assert.deepEqual(userTexts(a), []);
    assert.deepEqual(userTexts(b), []);
    assert.equal(w.server.requests.length, requests, 'no model request was made');
    // Sent again under the selection it now knows, it goes to B.
    w.server.enqueue({ text: 'answered in B' });
    await w.c.receive(port, { type: 'chat/send', id: 's2', sessionId: b, text: 'meant for what the panel showed', selection: adopted(port).selection });
    assert.equal(port.sessionOf('s2'), b);
    await w.t.h.settle();
    assert.deepEqual(userTexts(b), ['meant for what the panel showed']);
  });

  it('the draft crossed by a host selection, and a session crossed by "+": no conversation is made, no session is sent to', async () => {
    const port = await w.view('panel');
    const a = (await w.t.h.createSession()).id;
    await w.c.receive(port, { type: 'session/new', id: 'n1' });
    const draftUnder = adopted(port).selection;
    w.c.selectEverywhere(a);
    const before = w.t.h.store.list().length;
    await w.c.receive(port, { type: 'chat/send', id: 's1', text: 'a new conversation, I thought', selection: draftUnder });
    assert.equal(refused(port, 's1'), 'SELECTION_CHANGED');
    assert.equal(w.t.h.store.list().length, before, 'no conversation was created');
    // Now the other way: A shown, "+" from a command (the host's draft) crosses a stop and a send to A.
    const aUnder = adopted(port).selection;
    w.c.newDraft();
    await w.c.receive(port, { type: 'chat/send', id: 's2', sessionId: a, text: 'for A', selection: aUnder });
    await w.c.receive(port, { type: 'queue/run', id: 's3', sessionId: a, selection: aUnder });
    await w.c.receive(port, { type: 'goal/pause', id: 's4', sessionId: a, selection: aUnder });
    for (const id of ['s2', 's3', 's4']) assert.equal(refused(port, id), 'SELECTION_CHANGED', id);
    await w.t.h.settle();
    assert.deepEqual(userTexts(a), []);
    assert.equal(adopted(port).sessionId, undefined);
    // A message naming a session explicitly (a node's menu, a transcript tab) carries no selection: not judged.
    await w.c.receive(port, { type: 'queue/run', id: 's5', sessionId: a });
    assert.ok(port.done('s5'), 'answered');
    assert.notEqual(refused(port, 's5'), 'SELECTION_CHANGED');
  });

  it('a selection restored after a reload, crossing the conversation the user started: the new one stays, and is sent its reply', async () => {
    const port = await w.view('panel');
    const old = (await w.t.h.createSession()).id;
    const under = adopted(port).selection; // the snapshot's number: the view restores `old` under it
    w.server.enqueue({ text: 'Hello from the new conversation.', chunkSize: 4, chunkDelayMs: 5 });
    // Typed before the snapshot (composed under 0), sent from the draft: the host creates and selects it.
    const sending = w.c.receive(port, { type: 'chat/send', id: 's1', text: 'hello after the reload', selection: 0 });
    await until(() => port.of('session/selected').length > 0);
    await w.c.receive(port, { type: 'session/select', sessionId: old, selection: under, restored: true });
    await sending;
    const made = port.sessionOf('s1');
    await w.t.h.settle();
    assert.equal(port.sessionId, made, 'the stale restore was dropped');
    assert.equal(adopted(port).sessionId, made, 'the panel shows what it is sent');
    await until(() => port.of('transcript/append').some((m) => m.sessionId === made && m.entries.some((e) => e.kind === 'assistant')));
    // The other order: the restore arrives first (nothing newer yet): followed, then the host's newer selection wins.
    const port2 = await w.view('panel');
    await w.c.receive(port2, { type: 'session/select', sessionId: old, selection: adopted(port2).selection, restored: true });
    assert.equal(port2.sessionId, old);
    w.server.enqueue({ text: 'second' });
    await w.c.receive(port2, { type: 'chat/send', id: 's2', sessionId: old, text: 'to old', selection: adopted(port2).selection });
    assert.equal(port2.sessionOf('s2'), old);
  });

  it("a Retry on the shown conversation's failed turn, crossed by a host selection: refused, the turn is not run again", async () => {
    const port = await w.view('panel');
    w.server.enqueue({ fault: { kind: 'status', status: 401, message: 'bad key' } });
    await w.c.receive(port, { type: 'chat/send', id: 'r1', text: 'please answer', selection: adopted(port).selection });
    const a = port.sessionOf('r1');
    await w.t.h.settle();
    const end = [...w.t.h.resident(a)!.session.events].reverse().find((e) => e.type === 'turn/end')!;
    assert.ok(end.type === 'turn/end' && end.stopReason === 'error', 'the scenario: a failed turn offering Retry');
    const under = adopted(port).selection;
    const b = (await w.t.h.createSession()).id;
    w.c.selectEverywhere(b); // crosses the Retry clicked on A's notice
    const requests = w.server.requests.length;
    w.server.enqueue({ text: 'run again' });
    await w.c.receive(port, { type: 'chat/retry', id: 'r2', sessionId: a, seq: end.seq, selection: under });
    assert.equal(refused(port, 'r2'), 'SELECTION_CHANGED');
    await w.t.h.settle();
    assert.equal(w.server.requests.length, requests, 'no model request was made');
  });

  it('a hostile view: a malformed selection or a restore without one is refused at the boundary', async () => {
    const port = await w.view('panel');
    const a = (await w.t.h.createSession()).id;
    const before = port.of('message/rejected').length;
    for (const bad of [
      { type: 'chat/send', id: 'x1', sessionId: a, text: 'hi', selection: -1 },
      { type: 'chat/send', id: 'x2', sessionId: a, text: 'hi', selection: '3' },
      { type: 'chat/send', id: 'x3', sessionId: a, text: 'hi', selection: 1.5 },
      { type: 'session/select', sessionId: a, restored: true },
      { type: 'session/select', sessionId: a, selection: 0, restored: false },
      { type: 'agent/interrupt', id: 'x4', sessionId: a, selection: Number.MAX_VALUE },
    ])
      await w.c.receive(port, bad);
    assert.equal(port.of('message/rejected').length - before, 6);
    assert.equal(port.of('request/done').length, 0, 'none reached a handler');
  });
});

/** A well-formed message of every selection-bound request, without its number: a row made `typed` or `action` without one here fails to compile. */
type Bound = { [K in RequestType as SelectionBound[K] extends false ? never : K]: RequestMessage<K> };
const S = 's-mqx1a2-abc001';
const BOUND: Bound = {
  'chat/send': { type: 'chat/send', id: 'r', sessionId: S, text: 'hi' },
  'agent/interrupt': { type: 'agent/interrupt', id: 'r', sessionId: S },
  'session/fork': { type: 'session/fork', id: 'r', sessionId: S, seq: 3 },
  'rewind/preview': { type: 'rewind/preview', id: 'r', sessionId: S, seq: 3, subtree: false },
  'rewind/apply': { type: 'rewind/apply', id: 'r', sessionId: S, seq: 3, what: 'files', token: 't1', choices: [] },
  'chat/retry': { type: 'chat/retry', id: 'r', sessionId: S, seq: 3 },
  'queue/withdraw': { type: 'queue/withdraw', id: 'r', sessionId: S, messageId: 'm1' },
  'queue/run': { type: 'queue/run', id: 'r', sessionId: S },
  'goal/pause': { type: 'goal/pause', id: 'r', sessionId: S },
  'goal/resume': { type: 'goal/resume', id: 'r', sessionId: S },
  'goal/clear': { type: 'goal/clear', id: 'r', sessionId: S },
  'goal/limit': { type: 'goal/limit', id: 'r', sessionId: S, maxRounds: 5 },
  'worktree/review': { type: 'worktree/review', id: 'r', sessionId: S },
  'worktree/apply': { type: 'worktree/apply', id: 'r', sessionId: S },
  'worktree/discard': { type: 'worktree/discard', id: 'r', sessionId: S },
  'worktree/keep': { type: 'worktree/keep', id: 'r', sessionId: S },
};

describe('extension: the selection number is checked once for every selection-bound request (decision 0120)', () => {
  it('every row of ACTS_ON_SELECTION that is true: a malformed number refused at the boundary, none or a number accepted', () => {
    const rows = Object.entries(ACTS_ON_SELECTION).filter(([, redo]) => redo !== false);
    assert.ok(rows.length >= 16, `${rows.length} rows`);
    for (const [type] of rows) {
      const body = BOUND[type as keyof Bound] as Record<string, unknown> | undefined;
      assert.ok(body, `${type}: a sample message`);
      assert.equal(isWebviewToHost(body), true, `${type} without a number`);
      for (const ok of [0, 7, Number.MAX_SAFE_INTEGER]) assert.equal(isWebviewToHost({ ...body, selection: ok }), true, `${type} under ${ok}`);
      for (const bad of [-1, '3', 1.5, Number.NaN, Number.MAX_VALUE, null, true, [1], { n: 1 }])
        assert.equal(isWebviewToHost({ ...body, selection: bad }), false, `${type} under ${JSON.stringify(bad)}`);
    }
  });

  it('a request of a row that is false is not judged on a selection it does not carry', () => {
    // `workflow/cancel` names its run; a stray field is ignored as any unknown field is, never read.
    assert.equal(ACTS_ON_SELECTION['workflow/cancel'], false);
    assert.equal(isWebviewToHost({ type: 'workflow/cancel', id: 'r', runId: 'wf1' }), true);
  });
});

describe('extension: Fork and Rewind… from a message act on the selected session (decision 0120)', () => {
  const w = panelPerTest({ panel: false });

  it('a Fork, a rewind preview and a rewind of the conversation, crossed by a host selection: refused, no fork is made', async () => {
    const port = await w.view('panel');
    w.server.enqueue({ text: 'first answer' });
    await w.c.receive(port, { type: 'chat/send', id: 's1', text: 'hello', selection: adopted(port).selection });
    const a = port.sessionOf('s1');
    await w.t.h.settle();
    const seq = (await w.t.h.store.length(a)) - 1;
    const under = adopted(port).selection;
    const b = (await w.t.h.createSession()).id;
    w.c.selectEverywhere(b); // crosses the actions clicked on A's message
    const sessions = w.t.h.store.list().length;
    await w.c.receive(port, { type: 'session/fork', id: 'f1', sessionId: a, seq, selection: under });
    await w.c.receive(port, { type: 'rewind/preview', id: 'f2', sessionId: a, seq, subtree: false, selection: under });
    await w.c.receive(port, { type: 'rewind/apply', id: 'f3', sessionId: a, seq, what: 'conversation', choices: [], selection: under });
    for (const id of ['f1', 'f2', 'f3']) {
      const done = port.done(id);
      assert.ok(done && !done.ok, `${id}: ${JSON.stringify(done)}`);
      assert.equal(done.code, 'SELECTION_CHANGED', id);
      assert.match(done.error, /nothing was done\. Select .* and do it again/, 'an action is not said to be in the input');
    }
    assert.equal(w.t.h.store.list().length, sessions, 'no fork was made');
    assert.equal(adopted(port).sessionId, b, 'the panel stays on the host’s choice');
    // Composed under the selection the panel now knows (A clicked again), the same Fork runs.
    await w.c.receive(port, { type: 'session/select', sessionId: a, selection: adopted(port).selection });
    await w.c.receive(port, { type: 'session/fork', id: 'f4', sessionId: a, seq, selection: under });
    const done = port.done('f4');
    assert.ok(done?.ok, `an older number naming the session shown now passes: ${JSON.stringify(done)}`);
    assert.equal(w.t.h.store.list().length, sessions + 1);
  });
});

describe('extension: the worktree bar acts on the selected session too (decision 0120)', () => {
  const w = panelPerTest({ panel: false, harness: { approval: 'never' } });

  it('a Discard on the worktree bar, crossed by a host selection of another session: refused, the worktree stays open', async () => {
    initRepo(w.t.workspace);
    const root = await w.t.h.createSession();
    w.server.enqueue({ toolCalls: [{ name: 'write_file', arguments: { path: 'b.txt', content: 'the child’s work\n' } }] }, { text: 'done' });
    const run = await w.t.h.subagents.start(root, 'spawn', { prompt: 'write b', label: 'wt', isolation: 'worktree' });
    await run.result;
    await run.dispose();
    const port = await w.view('panel');
    await until(() => port.node(run.id)?.worktree?.state === 'open');
    // The panel shows the child: its worktree bar offers Discard.
    await w.c.receive(port, { type: 'session/select', sessionId: run.id, selection: adopted(port).selection });
    const under = adopted(port).selection;
    // The host selects the parent (a fork, a reveal) while the user's Discard is on its way.
    w.c.selectEverywhere(root.id);
    for (const [i, type] of (['worktree/discard', 'worktree/keep', 'worktree/apply'] as const).entries()) {
      await w.c.receive(port, { type, id: `w${i}`, sessionId: run.id, selection: under });
      const done = port.done(`w${i}`);
      assert.ok(done && !done.ok, `${type}: ${JSON.stringify(done)}`);
      assert.equal(done.code, 'SELECTION_CHANGED', type);
    }
    assert.equal(w.t.h.store.summaryRef(run.id)?.worktree?.state, 'open', 'the child’s work is still there');
  });
});
