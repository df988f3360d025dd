import assert from 'node:assert/strict';
import { demoReply } from '../../support/demo-script';
import { dataOf, workflowWorld } from './helpers';

// `npm start -- --demo`: the scripted demo model's workflow scene runs end to end.
describe('workflow: the demo scene', () => {
  const x = workflowWorld();
  it('"run a workflow" fans out four children in two phases and the model answers', async () => {
    x.w.server.setFallback((body) => ({ ...demoReply(body), chunkDelayMs: 0 }));
    await x.root.accept('run a workflow', { kind: 'user' });
    await x.w.t.h.settle();
    assert.deepEqual(
      x.events('workflow/phase').map((e) => dataOf(e).title),
      ['review', 'summarise'],
    );
    const end = dataOf(x.events('workflow/end')[0]);
    assert.equal(end.status, 'completed', String(end.error));
    assert.equal(end.agents, 4);
    assert.match(x.root.lastTurn?.stopReason ?? '', /completed/);
  });
});
