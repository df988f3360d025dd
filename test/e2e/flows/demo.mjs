// Issue 21.6, the demo (`npm start -- --demo`) as a person meets it, on the real VS Code workbench:
//   01 the empty panel offers a button for every scene: children, fork, interrupt, workflow,
//      both approvals, and a goal
//   02 the workflow button, paced as the demo paces it (each agent a few seconds): while its
//      agents stream, Stop in the chat stops the run mid-way — the run node reads interrupted,
//      the scripted model stops streaming at once and the summary agent is never asked
//   03 the next prompt in that conversation is answered: "survey the workspace" runs its child
//   04 a new conversation from the goal button: the goal runs its two rounds by itself (a few
//      seconds each) and blocks at its round limit
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { repoRoot } from '../../../scripts/e2e/paths.mjs';
import { SEL } from '../lib/flow.mjs';
import { slack } from '../lib/patience.mjs';

const require = createRequire(import.meta.url);
const { demoResponder, DEMO_GOAL, DEMO_PROMPT_LABELS } = require(join(repoRoot, 'out', 'test', 'support', 'demo-script.js'));

/** The demo's pace in this flow: long enough to stop a workflow while its agents stream on a busy machine. */
const STEP_MS = 4_000;
const WORKFLOW = 'run a workflow';
const RUN = 'review-parts';
const PARTS = ['parser', 'store', 'webview'];
const GOAL_LABEL = DEMO_PROMPT_LABELS.find((l) => l.startsWith('Goal: '));

/** The task a request carries (its last user message). */
const taskOf = (r) => String(r.body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');

export const flow = {
  name: 'demo',
  model: (model) => model.setFallback(demoResponder({ stepMs: STEP_MS })),
  async run({ page, panel, chat, model, row, rowWith, send, openPanel, command, step, until, visible, say }) {
    const examples = panel.locator('.examples button');
    const button = (label) => examples.filter({ hasText: new RegExp(`^\\s*${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`) });
    const notYet = (seen) => {
      throw new Error(seen);
    };

    await step('every-scene-has-a-button', 150_000, async () => {
      await visible(page.locator(SEL.activityIcon), 'the Arbor activity-bar icon (is the extension loading?)', 90_000);
      await openPanel();
      // The buttons come with the panel's first snapshot (slow on a busy machine: the step's bound covers it).
      await until('a button for every scene in the empty panel', 120_000, async () => {
        const shown = (await examples.allTextContents()).map((s) => s.replace(/\s+/g, ' ').trim());
        return JSON.stringify(shown) === JSON.stringify(DEMO_PROMPT_LABELS) || notYet(`shown: ${JSON.stringify(shown)}`);
      });
      for (const scene of ['survey the workspace', 'fork a reviewer', 'start a long task', WORKFLOW, 'run the tests', 'edit the settings', GOAL_LABEL])
        await visible(button(scene), `the "${scene}" button`, 5_000);
    });

    await step('paced-workflow-stopped-mid-way', 90_000, async () => {
      await button(WORKFLOW).click({ timeout: slack(10_000) });
      await visible(row(WORKFLOW), `the conversation "${WORKFLOW}" in the tree`, 20_000);
      // Mid-way: a review agent is streaming (paced: each takes about STEP_MS), the summary not yet asked.
      const asked = (task) => model.requests.map(taskOf).filter((t) => t.startsWith(task)).length;
      await until('a review agent to stream', 60_000, async () => {
        const streaming = model.streaming > 0 && asked('WORKFLOW: review') > 0;
        return streaming || notYet(`review agents asked: ${asked('WORKFLOW: review')}, replies streaming: ${model.streaming}`);
      });
      say(`  stopping with ${model.streaming} repl(y/ies) streaming, ${asked('WORKFLOW: review')} review agent(s) asked`);
      if (asked('WORKFLOW: summarise') > 0) throw new Error('the review phase was over before Stop could be clicked (the pace is too fast for this machine)');
      await panel.locator('.composer vscode-button', { hasText: 'Stop' }).dispatchEvent('click', {}, { timeout: slack(10_000) });
      const stopped = Date.now();
      await until('the scripted model to stop streaming', 10_000, async () => model.streaming === 0 || notYet(`still streaming: ${model.streaming}`));
      say(`  the model stopped streaming ${Date.now() - stopped} ms after Stop`);
      await visible(rowWith(RUN, 'interrupted'), `the run node "${RUN}" interrupted`, 20_000);
      await visible(rowWith(WORKFLOW, 'interrupted'), 'the conversation interrupted', 10_000);
      if (asked('WORKFLOW: summarise') !== 0)
        throw new Error(`the summary agent was asked although the run was stopped in its review phase (asked: ${model.requests.map(taskOf).join(' | ')})`);
      for (const p of PARTS) {
        if ((await rowWith(p, 'running').count()) > 0) throw new Error(`agent "${p}" still reads running after Stop`);
      }
    });

    await step('next-prompt-answers', 60_000, async () => {
      await send('survey the workspace');
      await visible(row('surveyor'), "the 'surveyor' node", 20_000);
      await visible(chat.locator('article.msg.assistant', { hasText: 'Started it.' }), 'the answer to the next prompt', 20_000);
      await visible(rowWith('surveyor', 'settled'), "'surveyor' settled", 40_000);
    });

    await step('goal-button', 90_000, async () => {
      await command('Arbor: New Conversation');
      await visible(button(GOAL_LABEL), `the "${GOAL_LABEL}" button in the empty panel`, 10_000);
      await button(GOAL_LABEL).click({ timeout: slack(10_000) });
      const goalRow = row(DEMO_GOAL.prompt).first();
      await visible(goalRow, `the conversation "${DEMO_GOAL.prompt}"`, 20_000);
      const seen = new Set();
      await until(`the goal to run ${DEMO_GOAL.goalRounds} rounds and block at its limit`, 60_000, async () => {
        const t = ((await goalRow.locator('.goal').textContent({ timeout: slack(2_000) })) ?? '').replace(/\s+/g, ' ').trim();
        if (t) seen.add(t);
        return t === `blocked · ${DEMO_GOAL.goalRounds}/${DEMO_GOAL.goalRounds}` || notYet(`goal badge seen: ${[...seen].join(', ')}`);
      });
      say(`  goal badge: ${[...seen].join(' → ')}`);
      await visible(chat.locator('article.msg.assistant', { hasText: `Round ${DEMO_GOAL.goalRounds} done` }), "the last round's answer", 10_000);
    });
  },
};
