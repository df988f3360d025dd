// Issue 21.6 in the built webview (headless chromium, scripted host): what the user reads
// names sessions, never by their raw ids. A child's first notices read "Started by <parent>"
// and "Task from <parent>"; a message the user sent the child is the user's.
import * as assert from 'node:assert/strict';
import type { TranscriptEntry } from '../../src/protocol';
import { FIXTURE_AT, FIXTURE_SETTINGS, restingNode, webviewFixture } from '../support/webview-fixture';

const SETTINGS = FIXTURE_SETTINGS;
const T = FIXTURE_AT;
const ROOT = 's-mx5bfxcz-2d979a23';
const CHILD = `${ROOT}.32c1ba`;
const node = restingNode;
const NODES = [
  node(ROOT, { title: 'Survey the workspace' }),
  node(CHILD, { parentId: ROOT, origin: 'subagent', depth: 1, label: 'surveyor', mode: 'continuable', status: 'settled', lastStopReason: 'completed' }),
];

describe('webview: names, not ids (issue 21.6)', () => {
  const w = webviewFixture('arbor-webview-names-');
  const { send, textOf } = w;

  it("a child's first notices name its parent; the user's own message to it reads as the user's", async () => {
    await w.open({ view: 'panel' }, { viewport: { width: 420, height: 900 } });
    const entries: TranscriptEntry[] = [
      {
        kind: 'user',
        seq: 0,
        at: T,
        source: 'delegation',
        text: `[Arbor runtime] You are a subagent (depth 1) working for session ${ROOT}. Your permissions were fixed when you were started; they cannot be widened.`,
      },
      { kind: 'user', seq: 1, at: T, source: 'delegation', fromSession: ROOT, text: 'List the packages of the workspace.' },
      { kind: 'assistant', seq: 2, at: T, text: 'There are three.' },
      { kind: 'user', seq: 3, at: T, source: 'user', text: 'also check the docs' },
    ];
    await send(
      { type: 'state/snapshot', nodes: NODES, selected: CHILD, settings: SETTINGS, approvals: [] },
      { type: 'transcript/reset', sessionId: CHILD, entries, hasMore: false },
    );
    const who = await w.page.evaluate<string[]>(`[...document.querySelectorAll('.chat article .who')].map((e) => e.textContent.trim())`);
    assert.equal(who.length, 4, JSON.stringify(who));
    assert.match(who[0], /^Started by Survey the workspace/);
    assert.match(who[1], /^Task from Survey the workspace/);
    assert.match(who[3], /^You/);
    const text = await textOf('.chat .scroller');
    assert.ok(!text.includes(ROOT), `the chat shows no session id: ${text}`);
    // A settled child's notice, in its parent's chat, names the child without its id.
    await send(
      { type: 'session/selected', sessionId: ROOT, selection: 1 },
      {
        type: 'transcript/reset',
        sessionId: ROOT,
        entries: [
          { kind: 'user', seq: 5, at: T, source: 'subagent-settled', fromSession: CHILD, text: '[subagent surveyor settled: completed]\nThere are three.' },
        ],
        hasMore: false,
      },
    );
    const notice = await textOf('article.settled .fact');
    assert.match(notice, /surveyor\s+settled: completed/);
    assert.ok(!notice.includes('32c1ba'), `the notice shows no id: ${notice}`);
    // A background one-shot's answer is its own kind (decision 0052): a result, named, its answer out of the JSON.
    const body = JSON.stringify({ childId: CHILD, stopReason: 'completed', answer: 'Three packages.' });
    await send({
      type: 'transcript/reset',
      sessionId: ROOT,
      entries: [
        { kind: 'user', seq: 6, at: T, source: 'subagent-result', fromSession: CHILD, text: `[background subagent surveyor finished: completed]\n${body}` },
      ],
      hasMore: false,
    });
    assert.match(await textOf('article.settled .who'), /^Background result/);
    const result = await textOf('article.settled');
    assert.match(result, /surveyor\s+finished: completed/);
    assert.match(result, /Answer from surveyor/);
    assert.ok(!result.includes('32c1ba') && !result.includes('childId'), `the result shows no id and no raw JSON: ${result}`);
    assert.match(text, /working for “Survey the workspace”\./);
  });

  it('approval cards and error boxes name the sessions they speak of', async () => {
    await w.open({ view: 'panel' }, { viewport: { width: 420, height: 900 } });
    const prompt = {
      requestId: 'r1',
      sessionId: CHILD,
      lineage: [CHILD, ROOT],
      tool: 'message_agent',
      summary: `message_agent ${CHILD}: also check the docs`,
      reason: `agent ${CHILD} asks to write outside the workspace`,
    };
    const entries: TranscriptEntry[] = [
      { kind: 'user', seq: 0, at: T, text: 'go', source: 'user' },
      { kind: 'turn', seq: 1, at: T, phase: 'end', stopReason: 'error', error: `No agent ${CHILD} can take it: session ${CHILD} is settled.` },
    ];
    await send(
      { type: 'state/snapshot', nodes: NODES, selected: ROOT, settings: SETTINGS, approvals: [prompt] },
      { type: 'transcript/reset', sessionId: ROOT, entries, hasMore: false },
    );
    const card = await textOf('.approval');
    assert.ok(!card.includes(ROOT) && !card.includes('32c1ba'), `the approval card shows no id: ${card}`);
    assert.match(card, /asked by surveyor/);
    assert.match(card, /message_agent “surveyor”: also check the docs/);
    const error = await textOf('.turn-end .error-text');
    assert.equal(error, 'No agent “surveyor” can take it: “surveyor” is settled.');
  });

  it('tells conversations of one name apart in the tree: the younger reads "(2)"', async () => {
    await w.open({ view: 'panel' }, { viewport: { width: 420, height: 600 } });
    const older = 's-aaaaaaaa-11111111';
    const younger = 's-bbbbbbbb-22222222';
    await send({
      type: 'state/snapshot',
      nodes: [
        node(younger, { title: 'please survey the workspace', createdAt: '2025-06-01T10:00:00.000Z' }),
        node(older, { title: 'please survey the workspace', createdAt: '2025-06-01T09:00:00.000Z' }),
        node('s-cccccccc-33333333', { title: 'something else' }),
      ],
      settings: SETTINGS,
      approvals: [],
    });
    assert.equal(await textOf(`[data-row-id="${older}"] .name`), 'please survey the workspace');
    assert.equal(await textOf(`[data-row-id="${younger}"] .name`), 'please survey the workspace (2)');
    assert.equal(await textOf('[data-row-id="s-cccccccc-33333333"] .name'), 'something else');
    assert.match(
      String(await w.page.evaluate(`document.querySelector('[data-row-id="${younger}"]').getAttribute('aria-label')`)),
      /^please survey the workspace \(2\),/,
    );
  });
});
