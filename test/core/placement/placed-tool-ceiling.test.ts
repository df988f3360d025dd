// Attack (permissions never widen): a tool-filtered child (no write tools) places its own child
// on a node. The placed provider declares no toolFilter capability, so the parent's ceiling is
// not handed on and the placed child runs with every tool on the other side.
import assert from 'node:assert/strict';
import { eventsOf, ofType } from '../subagent/helpers';
import { ended, placedWorld, untilLog } from './fixture';

describe('placement: a placed child never gets a tool its caller could not call', function () {
  this.timeout(120_000);
  const w = placedWorld();

  it('a parent filtered to read_file + subagent cannot have its placed child write_file', async () => {
    w.script.on('p', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] write x.txt', placement: 'far' } }] }, { text: 'parent done' });
    w.script.on('c', { toolCalls: [{ name: 'write_file', arguments: { path: 'x.txt', content: 'wider\n' } }] }, { text: 'child done' });
    const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[p]] delegate', toolFilter: ['read_file', 'subagent'] });
    const r = await run.result;
    await run.dispose();
    assert.equal(r.stopReason, 'completed', r.error);
    const kids = w.t.h.store.children(run.id);
    if (kids.length === 1) {
      // The hole: the placed child was offered (and used) tools its parent could not call.
      const evs = await untilLog(w, kids[0].id, ended(1), 'the placed turn end');
      const offered = ((w.script.bodies('c')[0]?.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
      const wrote = ofType(evs, 'tool/result').filter((x) => !x.isError);
      assert.fail(`the placed child got ${offered.join(', ')} and did: ${wrote.map((x) => `${x.name}: ${x.content.slice(0, 60)}`).join('; ')}`);
    }
    assert.equal(kids.length, 0, 'no placed child was made');
    const refused = ofType(await eventsOf(w.t.h, run.id), 'tool/result').find((x) => x.name === 'subagent');
    assert.equal(refused?.isError, true);
    assert.match(refused?.content ?? '', /UNSUPPORTED_CAPABILITY/);
  });
});
