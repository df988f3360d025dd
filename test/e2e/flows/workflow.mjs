// Issue 12, points 1–3 and 6: a workflow run in the panel, on the real VS Code workbench.
//   01 "run a workflow": the scripted model calls the `workflow` tool (the demo scene: three
//      parts reviewed in parallel, then a summary)
//   02 watch a run node appear under the conversation and fill in live: phase review with agents running (n/3), its agents appearing under
//      the run node, then phase summarise (4 agents), then completed with its phases and its log
//      line in the node's hover, and its agents read ended
//   03 "run a slow workflow": a second run whose three agents stream for minutes; all three run
//   04 Cancel Workflow from the run node's context menu: the run ends cancelled, its agents are
//      stopped (none running, no model request left open), the first run is untouched
//   05 reload the window: both run nodes come back from the summaries, with their phases,
//      statuses and agents
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { repoRoot } from '../../../scripts/e2e/paths.mjs';

const require = createRequire(import.meta.url);
const { demoReply, DEMO_WORKFLOW } = require(join(repoRoot, 'out', 'test', 'support', 'demo-script.js'));

const ROOT = 'run a workflow';
const RUN = 'review-parts';
const PARTS = ['parser', 'store', 'webview'];
const SLOW_RUN = 'slow-review';
const SLOW_PARTS = ['api', 'cli', 'docs'];
const SLOW_TEXT = 'Reading one line at a time. '.repeat(300);

const isChild = (body) => body.messages.some((m) => m.role === 'user' && String(m.content ?? '').startsWith('[Arbor runtime] You are a subagent'));
const lastUserText = (body) => String([...body.messages].reverse().find((m) => m.role === 'user')?.content ?? '');

export const flow = {
  name: 'workflow',
  // The demo scene, with each agent of the first run answering after 4 s (so a person, and this
  // flow, can watch the node fill in) and a second run ("slow workflow") whose agents stream for
  // minutes, to be cancelled.
  model: (model) =>
    model.setFallback((body) => {
      const last = body.messages.at(-1);
      if (isChild(body)) {
        const task = lastUserText(body);
        if (SLOW_PARTS.some((p) => task.startsWith(`WORKFLOW: review the ${p}`))) return { text: SLOW_TEXT, chunkSize: 4, chunkDelayMs: 100 };
        if (task.startsWith('WORKFLOW')) return { ...demoReply(body), delayMs: 4_000 };
        return demoReply(body);
      }
      if (last?.role === 'user' && String(last.content ?? '').includes('slow workflow')) {
        return {
          toolCalls: [
            {
              name: 'workflow',
              arguments: {
                script: DEMO_WORKFLOW,
                meta: { name: SLOW_RUN, description: 'Review three parts slowly (to be cancelled).' },
                args: { parts: SLOW_PARTS },
                concurrency: 3,
              },
            },
          ],
        };
      }
      return demoReply(body);
    }),
  async run({ page, panel, chat, model, row, send, contextMenu, openPanel, reload, step, until, visible, say, outDir }) {
    /** Every tree row in one round trip: name, status word, level, the detail line and the hover. */
    const rows = () =>
      panel.locator('[role="treeitem"]').evaluateAll((els) =>
        els.map((e) => {
          const label = e.getAttribute('aria-label') ?? '';
          const comma = label.indexOf(', ');
          return {
            name: label.slice(0, comma),
            status: label.slice(comma + 2).split(',')[0],
            level: Number(e.getAttribute('aria-level')),
            activity: (e.querySelector('.detail .activity')?.textContent ?? '').replace(/\s+/g, ' ').trim(),
            title: e.getAttribute('title') ?? '',
          };
        }),
      );
    const find = (all, name) => all.find((r) => r.name === name);
    /** The run's agents: rows one level below its node, right after it. */
    const agentsUnder = (all, runName) => {
      const i = all.findIndex((r) => r.name === runName);
      if (i < 0) return [];
      const out = [];
      for (let j = i + 1; j < all.length && all[j].level > all[i].level; j++) if (all[j].level === all[i].level + 1) out.push(all[j]);
      return out;
    };
    const show = (r) => (r ? `${r.status} | ${r.activity}` : 'absent');
    /** A probe's "not yet", with what it saw (`until` reports the last one on timeout). */
    const notYet = (seen) => {
      throw new Error(seen);
    };

    await step('start-a-workflow', 150_000, async () => {
      await openPanel();
      // Room for both runs and their seven agents: the tree takes the panel (its sash, by keyboard: End).
      const sash = panel.locator('[role="separator"][aria-label="Resize the tree and the chat"]');
      await sash.focus({ timeout: 10_000 });
      await sash.press('End', { timeout: 5_000 });
      await until(
        'the tree pane to grow',
        10_000,
        async () =>
          Number(await sash.getAttribute('aria-valuenow', { timeout: 2_000 })) >= 450 || notYet(`tree height ${await sash.getAttribute('aria-valuenow')}`),
      );
      await send(ROOT);
      await visible(row(ROOT), `the conversation "${ROOT}" in the tree`, 20_000);
    });

    // Every state the run node showed, in order (consecutive repeats folded), and the agents seen under it.
    const states = [];
    const agentCounts = [];
    await step('watch-it-fill-in', 90_000, async () => {
      // From before the run node appears (the model has yet to call the tool) to its end.
      const final = await until(`the run node "${RUN}" to appear and end settled`, 80_000, async () => {
        const all = await rows();
        const run = find(all, RUN);
        const s = show(run);
        if (states.at(-1) !== s) states.push(s);
        const n = agentsUnder(all, RUN).length;
        if (agentCounts.at(-1) !== n) agentCounts.push(n);
        return run?.status === 'settled' ? { all, run } : notYet(`states so far: ${states.join(' → ')}`);
      });
      say(`  run node states: ${states.join(' → ')}`);
      if (states[0] !== 'absent') say('  (the run node was already there at the first look)');
      say(`  agents under the run node, as they appeared: ${agentCounts.join(' → ')}`);
      // Live: the review phase was seen with agents running, then the summary phase.
      if (!states.some((s) => /^running \| review · [1-3]\/3 agents$/.test(s)))
        throw new Error(`the review phase was never seen with agents running (seen: ${states.join(' → ')})`);
      if (!states.some((s) => /^running \| summarise · 1\/4 agents$/.test(s)))
        throw new Error(`the summarise phase was never seen running (seen: ${states.join(' → ')})`);
      if (!agentCounts.some((n) => n > 0 && n < 4))
        throw new Error(`the agents did not appear one phase at a time under the run node (counts seen: ${agentCounts.join(' → ')})`);
      const { all, run } = final;
      if (run.activity !== 'summarise · 0/4 agents') throw new Error(`the finished run reads "${run.activity}"`);
      for (const want of ['completed · 4 agents, 0 running', 'phases: review → summarise', 'log: reviewing 3 parts']) {
        if (!run.title.includes(want)) throw new Error(`the run node's hover lacks "${want}": ${run.title}`);
      }
      const agents = agentsUnder(all, RUN);
      const names = agents.map((a) => a.name);
      for (const p of [...PARTS, 'summary']) if (!names.includes(p)) throw new Error(`agent "${p}" is not under the run node (under it: ${names.join(', ')})`);
      // Each agent ended (its node no longer reads running; a one-shot child is disposed without an event of its own).
      await until("the run's agents to read ended", 20_000, async () => {
        const still = agentsUnder(await rows(), RUN).filter((a) => a.status === 'running' || a.status === 'queued');
        return still.length === 0 || notYet(`still running: ${still.map((a) => a.name).join(', ')}`);
      });
      const root = find(all, ROOT);
      if (!root || find(all, RUN).level !== root.level + 1) throw new Error('the run node is not one level under its conversation');
      await until('the parent to answer after the run', 20_000, async () => (await chat.textContent({ timeout: 2_000 })).includes('The workflow finished'));
    });

    await step('start-a-slow-workflow', 60_000, async () => {
      await send('now run a slow workflow');
      await until(`the run node "${SLOW_RUN}" to run its three agents`, 50_000, async () => {
        const all = await rows();
        const run = find(all, SLOW_RUN);
        const running = agentsUnder(all, SLOW_RUN).filter((a) => a.status === 'running').length;
        return run?.status === 'running' && run.activity === 'review · 3/3 agents' && running === 3 ? true : notYet(`${show(run)}; agents running: ${running}`);
      });
      // The side bar alone, for the README: a finished run and one under way.
      await page.screenshot({ path: join(outDir, 'workflow-side-bar.png'), clip: { x: 0, y: 36, width: 348, height: 500 }, timeout: 15_000 });
    });

    await step('cancel-it', 60_000, async () => {
      await contextMenu(row(SLOW_RUN).first(), 'Cancel Workflow');
      const final = await until(`the run node "${SLOW_RUN}" to end cancelled with its agents stopped`, 40_000, async () => {
        const all = await rows();
        const run = find(all, SLOW_RUN);
        const agents = agentsUnder(all, SLOW_RUN);
        const ended =
          run?.status === 'interrupted' &&
          /^cancelled/m.test(run.title.split('\n')[1] ?? '') &&
          agents.length === 3 &&
          agents.every((a) => a.status !== 'running' && a.status !== 'queued');
        return ended ? { all, run, agents } : notYet(`${show(run)}; agents: ${agents.map((a) => `${a.name} ${a.status}`).join(', ')}`);
      });
      say(`  cancelled run: ${show(final.run)}; agents: ${final.agents.map((a) => `${a.name} ${a.status}`).join(', ')}`);
      if (!/ · 0\/3 agents$/.test(final.run.activity)) throw new Error(`the cancelled run still counts running agents: ${final.run.activity}`);
      // Stopped means stopped: no agent's request is left streaming from the model server.
      await until('every model request to be closed', 20_000, async () => (model.inFlight === 0 ? true : notYet(`in flight: ${model.inFlight}`)));
      const first = find(final.all, RUN);
      if (first?.status !== 'settled') throw new Error(`cancelling one run touched the other: ${show(first)}`);
    });

    await step('reload-and-find-both-runs', 150_000, async () => {
      await reload();
      await until('both run nodes to come back with their phases, statuses and agents', 60_000, async () => {
        const all = await rows();
        const done = find(all, RUN);
        const cancelled = find(all, SLOW_RUN);
        const ok =
          done?.status === 'settled' &&
          done.title.includes('phases: review → summarise') &&
          done.title.includes('completed · 4 agents') &&
          agentsUnder(all, RUN).length === 4 &&
          cancelled?.status === 'interrupted' &&
          /^cancelled/.test(cancelled.title.split('\n')[1] ?? '') &&
          cancelled.title.includes('phases: review') &&
          agentsUnder(all, SLOW_RUN).length === 3;
        return (
          ok ||
          notYet(
            `${RUN}: ${show(done)} (${agentsUnder(all, RUN).length} agents); ${SLOW_RUN}: ${show(cancelled)} (${agentsUnder(all, SLOW_RUN).length} agents)`,
          )
        );
      });
    });
  },
};
