import assert from 'node:assert/strict';
import type { WorkflowRunView } from '../../src/protocol';
import { assertDemoRunDone } from '../support/demo-run';
import { demoReply } from '../support/demo-script';
import { until } from '../support/harness';
import type { ChatBody } from '../support/model-server';
import { panelPerTest } from '../support/panel';

const isChild = (body: ChatBody) => body.messages.some((m) => m.role === 'user' && String(m.content ?? '').startsWith('[Arbor runtime] You are a subagent'));

// Issue 21.6: a workflow run's node opens a tab of its own. The demo scene runs on a real
// harness (a confined script, four real one-shot children, the scripted model server); a tab
// opened on the run's node while it runs gets its view, then the view again as the run goes on.
describe('extension: a workflow run tab over a real harness', () => {
  // A price for the test model, so the run's Σ has dollars.
  const w = panelPerTest({ harness: { prices: { 'test-model': { input: 3, cacheHit: 0.3, output: 15 } } } });

  it('shows the run live: phases, agents, log, then the result; the node reads its outcomes and its Σ', async () => {
    // Each agent answers after a pause, so the tab opens while the run is under way.
    w.server.setFallback((body) => (isChild(body) ? { ...demoReply(body), chunkDelayMs: 0, delayMs: 300 } : { ...demoReply(body), chunkDelayMs: 0 }));
    const panel = w.port;
    await w.c.receive(panel, { type: 'chat/send', id: 'r1', text: 'run a workflow' });
    const root = panel.sessionOf('r1');
    await until(() => panel.of('tree/node').some((m) => m.node.kind === 'workflow'), 20_000);
    const runNode = panel.of('tree/node').find((m) => m.node.kind === 'workflow')!.node;
    assert.equal(runNode.parentId, root);

    const tab = await w.view('transcript', runNode.id);
    const views = () => tab.of('workflow/view').flatMap((m) => (m.view ? [m.view] : []));
    assert.equal(views().length, 1, 'the tab gets the run as soon as it is ready');
    assert.equal(views()[0].status, 'running');
    assert.equal(tab.of('transcript/reset').length, 0, 'a run has no transcript: no "Loading the transcript…" forever');

    await w.t.h.settle();
    await until(() => views().at(-1)?.status === 'completed' && views().at(-1)?.result !== undefined, 10_000);
    const v = views().at(-1) as WorkflowRunView;
    assert.ok(views().length > 2, `the tab followed the run (${views().length} views)`);
    assert.deepEqual([v.name, v.parentId], ['review-parts', root]);
    assertDemoRunDone(v);
    assert.deepEqual(Object.keys(JSON.parse(v.result!.text)), ['parts', 'notes', 'summary']);

    // The node: "4 agents · done" from its counts, and its agents' spend together as its Σ.
    const node = panel.node(runNode.id)!;
    assert.deepEqual([node.status, node.workflow!.ended], ['settled', { done: 4 }]);
    const agents = v.agents.map((a) => panel.node(a.childId)!);
    const tokens = agents.reduce((n, a) => n + a.tokens.prompt + a.tokens.completion, 0);
    assert.ok(tokens > 0);
    assert.equal(node.subtree?.tokens, tokens);
    const usd = agents.reduce((n, a) => n + (a.costUsd ?? 0), 0);
    assert.ok(node.subtree?.costUsd !== undefined && Math.abs(node.subtree.costUsd - usd) < 1e-9, `Σ $${node.subtree?.costUsd} = $${usd}`);
    // Each agent hangs under the run, so the tab can open each one's transcript.
    for (const a of agents) assert.equal(a.parentId, runNode.id);
  });

  it('a tab on a run no store holds says so and what to do', async () => {
    const tab = await w.view('transcript', 'wf.no-such-run');
    const [m] = tab.of('workflow/view');
    assert.ok(m && m.view === null && /not stored any more .* Close this tab/.test(m.problem), JSON.stringify(m));
  });
});
