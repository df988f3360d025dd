// Issue 21.6 in the built webview (headless chromium, scripted host): the goal bar fits a
// 300 px panel, "Raise limit" asks by how much, and a blocked goal is not offered "Pause".
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { GoalView, TreeNode } from '../../src/protocol';
import { FIXTURE_SETTINGS, restingNode, webviewFixture } from '../support/webview-fixture';

const SETTINGS = FIXTURE_SETTINGS;
const ROOT = 's-root-1';
const blocked: GoalView = {
  phase: 'blocked',
  roundsStarted: 2,
  maxGoalRounds: 2,
  armed: false,
  objective: 'tidy the workspace: remove the generated files, sort the imports and make every test pass again',
  blocked: { code: 'round-limit', message: 'Every round of the limit (2) was started.' },
};
const root = (goal: GoalView): TreeNode => restingNode(ROOT, { title: 'Tidy up', goal });

describe('webview: the goal bar (issue 21.6)', () => {
  const w = webviewFixture('arbor-webview-goal-');
  const { send, posted, count, click } = w;
  const buttons = () => w.page.evaluate<string[]>(`[...document.querySelectorAll('.goal-bar button')].map((b) => b.textContent.trim())`);

  before(() => fs.mkdirSync(path.join(__dirname, '..', '..', '..', 'test-artifacts', 'webview-layout'), { recursive: true }));

  // At its limit (Raise limit, Clear), and raised so it offers Resume too (Resume, Raise limit, Clear).
  for (const [what, goal, want] of [
    ['at its round limit', blocked, ['Raise limit', 'Clear']],
    ['raised, offering Resume', { ...blocked, maxGoalRounds: 7 }, ['Resume', 'Raise limit', 'Clear']],
  ] as const)
    it(`fits 300 px blocked ${what}: nothing leaves the bar, its state and actions stay on one line`, async () => {
      await w.open({ view: 'panel' }, { viewport: { width: 300, height: 700 } });
      await send({
        type: 'state/snapshot',
        nodes: [root({ ...blocked, phase: 'active', armed: true, blocked: undefined })],
        selected: ROOT,
        settings: SETTINGS,
        approvals: [],
      });
      await send({ type: 'tree/node', node: root(goal) });
      assert.deepEqual(await buttons(), want);
      const out = await w.page.evaluate<string[]>(`(() => {
      const bar = document.querySelector('.goal-bar');
      const b = bar.getBoundingClientRect();
      const problems = [];
      if (b.right > document.documentElement.clientWidth + 0.5) problems.push('the bar is wider than the panel: ' + b.right);
      for (const el of bar.querySelectorAll('button, .phase, .rounds, .reason, .objective')) {
        const r = el.getBoundingClientRect();
        if (r.width === 0) problems.push('hidden: ' + el.textContent);
        if (r.right > b.right + 0.5 || r.left < b.left - 0.5) problems.push('outside the bar: ' + el.textContent + ' ' + r.left + '..' + r.right + ' of ' + b.left + '..' + b.right);
      }
      // One line of state and actions: nothing wrapped below it.
      const mids = [...bar.querySelectorAll('.meta > *')].filter((el) => el.getBoundingClientRect().width > 0).map((el) => { const r = el.getBoundingClientRect(); return (r.top + r.bottom) / 2; });
      if (Math.max(...mids) - Math.min(...mids) > 4)
        problems.push('the state and actions wrap: centres ' + mids.map(Math.round).join(', ') + ' of ' + [...bar.querySelectorAll('.meta > *')].map((el) => el.className.split(' ')[0] + ':' + Math.round(el.getBoundingClientRect().width)).join(' ') + ' in ' + Math.round(bar.querySelector('.meta').getBoundingClientRect().width));
      return problems;
    })()`);
      await w.page.screenshot({ path: path.join(__dirname, '..', '..', '..', 'test-artifacts', 'webview-layout', `goal-bar-300px-${want.length}.png`) });
      assert.deepEqual(out, []);
    });

  it('a blocked goal offers no Pause; Raise limit asks by how much and sends the new limit', async () => {
    await w.open({ view: 'panel' }, { viewport: { width: 300, height: 700 } });
    await send({ type: 'state/snapshot', nodes: [root(blocked)], selected: ROOT, settings: SETTINGS, approvals: [] });
    assert.deepEqual(await buttons(), ['Raise limit', 'Clear']);
    await w.page.click('.goal-bar button:has-text("Raise limit")');
    // Nothing is sent yet: the bar asks by how much (five unless changed).
    assert.equal((await posted()).filter((m) => m.type === 'goal/limit').length, 0);
    assert.equal(await count('.goal-bar .raise input'), 1);
    assert.equal(await w.page.evaluate(`document.querySelector('.goal-bar .raise input').value`), '5');
    await w.page.evaluate(
      `(() => { const i = document.querySelector('.goal-bar .raise input'); i.value = '3'; i.dispatchEvent(new Event('input', { bubbles: true })); })()`,
    );
    await click('.goal-bar .raise button[type="submit"]');
    const sent = (await posted()).filter((m) => m.type === 'goal/limit');
    assert.equal(sent.length, 1);
    assert.equal(sent[0].type === 'goal/limit' && sent[0].maxRounds, 5);
    assert.equal(await count('.goal-bar .raise'), 0, 'the question closes once answered');
    // An active goal can be paused.
    await send({ type: 'tree/node', node: root({ ...blocked, phase: 'active', armed: true, maxGoalRounds: 5, blocked: undefined }) });
    assert.ok((await buttons()).includes('Pause'));
  });
});
