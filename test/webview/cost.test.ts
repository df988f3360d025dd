// Issue 15.2 and 15.5 in the built webview (headless chromium, scripted host): a node's cost
// and its hover, the subtree total when collapsed, the budget bar and Set Budget, the budget
// stop in the chat with the way to raise it, the conversation's running total.
import * as assert from 'node:assert/strict';
import type { HostToWebview, TreeNode } from '../../src/protocol';
import { webviewFixture } from '../support/webview-fixture';

const SETTINGS = { sandbox: 'workspace-write', approval: 'ask', restricted: false, hasApiKey: true, modelSource: 'endpoint', model: 'deepseek-chat' } as const;
const T = '2025-06-01T09:00:00.000Z';
const ROOT = 's-root-1';
const CHILD = `${ROOT}.aaaaaa`;

const node = (id: string, parentId: string | undefined, extra: Partial<TreeNode>): TreeNode => ({
  id,
  ...(parentId ? { parentId } : {}),
  origin: parentId ? 'subagent' : 'user',
  depth: parentId ? 1 : 0,
  status: 'idle',
  tokens: { prompt: 1000, completion: 100, cacheHit: 500 },
  reports: 0,
  createdAt: T,
  ...extra,
});

const NODES = [
  node(ROOT, undefined, {
    title: 'Root conversation',
    costUsd: 0.0312,
    savedUsd: 0.02,
    subtree: { tokens: 1_201_100, cacheHit: 900_500, costUsd: 1.5, savedUsd: 0.43 },
    budget: { maxTokens: 1_400_000, maxCostUsd: 2, spentTokens: 1_201_100, spentUsd: 1.5 },
  }),
  node(CHILD, ROOT, { label: 'child-worker', tokens: { prompt: 1_200_000, completion: 1000, cacheHit: 900_000 }, costUsd: 1.4688, savedUsd: 0.41 }),
];

describe('webview: cost and budgets (scripted host)', () => {
  const w = webviewFixture('arbor-webview-cost-');
  const { send, lastPosted, count, textOf } = w;
  const snapshot = (extra: Partial<Extract<HostToWebview, { type: 'state/snapshot' }>> = {}): HostToWebview => ({
    type: 'state/snapshot',
    nodes: NODES,
    settings: SETTINGS,
    approvals: [],
    ...extra,
  });
  const attr = (sel: string, name: string) => w.page.evaluate<string>(`document.querySelector('${sel}').getAttribute('${name}')`);

  it("shows each node's cost, and on hover tokens in / cached / out and what cache hits saved", async () => {
    await w.open();
    await send(snapshot());
    const child = `[data-row-id="${CHILD}"]`;
    assert.equal(await textOf(`${child} .tokens`), '$1.47');
    const title = await attr(child, 'title');
    assert.match(title, /tokens in 1,200,000 \/ cached 900,000 \/ out 1,000/);
    assert.match(title, /cost \$1\.47 · saved \$0\.41 by cache hits/);
    // The root, expanded, shows its own cost; its hover also gives the subtree and the budget.
    const root = `[data-row-id="${ROOT}"]`;
    assert.equal(await textOf(`${root} .tokens`), '$0.03');
    assert.match(await attr(root, 'title'), /with everything below it: \$1\.50, 1,201,100 tokens · saved \$0\.43 by cache hits/);
    assert.match(await attr(root, 'title'), /budget: 1,201,100 of 1,400,000 tokens · \$1\.50 of \$2\.00/);
    // Collapsed, it shows the subtree's total.
    await w.page.click(`${root} .twisty`);
    assert.equal(await count(child), 0);
    assert.equal(await textOf(`${root} .tokens`), 'Σ $1.50');
  });

  it('a model with no price shows tokens only', async () => {
    await w.open();
    await send(snapshot({ nodes: [node(ROOT, undefined, { title: 'Local model', tokens: { prompt: 12_000, completion: 345, cacheHit: 0 } })] }));
    const root = `[data-row-id="${ROOT}"]`;
    assert.equal(await textOf(`${root} .tokens`), '12k');
    assert.match(await attr(root, 'title'), /cost unknown: a model with no price served it \(tokens only\)/);
  });

  it('draws the budget bar (a warning from 80 %) and Set Budget asks the host', async () => {
    await w.open();
    await send(snapshot());
    const bar = `[data-row-id="${ROOT}"] .budget`;
    assert.equal(await count(bar), 1);
    assert.equal(await count(`[data-row-id="${CHILD}"] .budget`), 0, 'only budgeted nodes have a bar');
    assert.equal(await w.page.evaluate(`document.querySelector('${bar}').classList.contains('warn')`), true, '86 % of the tokens');
    assert.match(await w.page.evaluate<string>(`document.querySelector('${bar} .fill').style.width`), /^86%$/);
    await w.page.click(bar);
    assert.deepEqual(await lastPosted(), { type: 'budget/pick', sessionId: ROOT });
    await send({ type: 'tree/node', node: { ...NODES[0], budget: { maxTokens: 1_400_000, spentTokens: 1_500_000 } } });
    assert.equal(await w.page.evaluate(`document.querySelector('${bar}').classList.contains('over')`), true);
  });

  it('shows a budget stop plainly in the chat, with the way to raise it, and the running total in the header', async () => {
    await w.open();
    await send(snapshot({ selected: ROOT }), {
      type: 'transcript/reset',
      sessionId: ROOT,
      entries: [
        { kind: 'user', seq: 0, at: T, text: 'do it', source: 'user' },
        {
          kind: 'turn',
          seq: 1,
          at: T,
          phase: 'end',
          stopReason: 'budget',
          error: 'The budget of Root conversation (1400000 tokens) cannot take the next request.',
        },
      ],
      hasMore: false,
    });
    assert.match(await textOf('.turn-end'), /Turn ended: Stopped by its budget/);
    assert.match(await textOf('.turn-end'), /cannot take the next request\. Raise the budget to go on\. Once it is raised, send a message to go on from here/);
    await w.page.click('vscode-button:has-text("Set Budget")');
    assert.deepEqual(await lastPosted(), { type: 'budget/pick', sessionId: ROOT });
    assert.equal(await textOf('.head .total'), '$1.50');
  });

  it('never shows $0.00 for an unknown cost: nothing before a request finished, "billed by Claude Code" for a remote program (issue 21.6)', async () => {
    const fresh = 's-root-2';
    const streaming = 's-root-3';
    const remote = `${ROOT}.bbbbbb`;
    const zero = { prompt: 0, completion: 0, cacheHit: 0 };
    await w.open();
    await send(
      snapshot({
        nodes: [
          node(ROOT, undefined, { title: 'Root conversation' }),
          node(remote, ROOT, {
            label: 'reviewer',
            tokens: { prompt: 30_000, completion: 900, cacheHit: 0 },
            costUsd: 0,
            remote: { program: 'claude-code', version: '2.1.332 (Claude Code)' },
          }),
          node(fresh, undefined, { title: 'A new conversation', status: 'running', tokens: zero, costUsd: 0 }),
          // Its first request under way: the prompt's estimate counts in its tokens, no request is priced yet.
          node(streaming, undefined, {
            title: 'Streaming',
            status: 'running',
            tokens: { prompt: 3400, completion: 12, cacheHit: 0 },
            tokensEstimated: true,
            costUsd: 0,
          }),
        ],
        selected: fresh,
      }),
    );
    // The first request is still under way: no figure on the row, none in the header.
    assert.equal(await count(`[data-row-id="${fresh}"] .tokens`), 0);
    assert.equal(await count('.head .total'), 0);
    assert.equal(await count(`[data-row-id="${streaming}"] .tokens`), 0, 'no $0.00 while the first request streams');
    // A remote program bills its own account: said by its name, never "$0.00".
    const row = `[data-row-id="${remote}"]`;
    assert.equal(await textOf(`${row} .tokens`), 'billed by Claude Code');
    assert.match(await attr(row, 'title'), /cost: billed by Claude Code/);
    assert.doesNotMatch(await textOf(row), /\$0\.00/);
    await send({ type: 'session/selected', sessionId: remote, selection: 1 });
    assert.equal(await textOf('.head .total'), 'billed by Claude Code');
    // A remote program that reported its cost shows it.
    await send({ type: 'tree/node', node: node(remote, ROOT, { label: 'reviewer', costUsd: 0.12, remote: { program: 'claude-code' } }) });
    assert.equal(await textOf(`${row} .tokens`), '$0.12');
  });

  it("says a budget stop in people's words, with no command-line hint, and the bar reads full (issue 21.6)", async () => {
    await w.open();
    const budget = { maxTokens: 75_000, spentTokens: 69_000 };
    await send(snapshot({ nodes: [node(ROOT, undefined, { title: 'Root conversation', budget, lastStopReason: 'budget' })], selected: ROOT }), {
      type: 'transcript/reset',
      sessionId: ROOT,
      entries: [
        { kind: 'user', seq: 0, at: T, text: 'do it', source: 'user' },
        {
          kind: 'turn',
          seq: 1,
          at: T,
          phase: 'end',
          stopReason: 'budget',
          error:
            "The budget of Root conversation (75000 tokens) cannot take the next request: 6000 tokens are left and this request may take 9000 (a prompt of about 8000 plus 1000 for the reply). Nothing was sent. A human can raise the budget (Set Budget on its node, or 'arbor run --budget'); then a message goes on from here.",
        },
      ],
      hasMore: false,
    });
    assert.equal(await textOf('.turn-end .error-text'), 'Budget reached: 69k of 75k tokens used; the next step needs about 9k. Raise the budget to go on.');
    assert.doesNotMatch(await textOf('.turn-end'), /arbor|--budget/);
    const bar = `[data-row-id="${ROOT}"] .budget`;
    assert.equal(await w.page.evaluate(`document.querySelector('${bar} .fill').style.width`), '100%');
    assert.equal(await w.page.evaluate(`document.querySelector('${bar}').classList.contains('over')`), true);
  });
});
