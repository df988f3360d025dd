// Issue 12, points 1–3 and 6, and issue 21.6: a workflow run in the panel and in a tab of its
// own, on the real VS Code workbench.
//   01 "run a workflow": the scripted model calls the `workflow` tool (the demo scene: three
//      parts reviewed in parallel, then a summary)
//   02 watch a run node appear under the conversation and fill in live: phase review with agents
//      running ("review · 2 running, 1 done"), its agents appearing under the run node, then
//      phase summarise, then "4 agents · done" with its phases and its log line in the node's
//      hover, its agents read ended, and its Σ (its agents' cost) on the row
//   03 click the run node: a tab of its own opens (never "Loading the transcript…") with its
//      phases (done), its four agents (done, each with its cost), its log, its result, "4 agents ·
//      done" and the same Σ as the row, in tokens and dollars; an agent's name opens its transcript
//   04 "run a slow workflow": a second run of four agents, three answer and one streams for
//      minutes; its tab opened from the node's context menu (Open Transcript) follows it live
//   05 Cancel Workflow from the run node's context menu: the run ends cancelled, the agent still
//      running is stopped (no model request left open), the row and the tab read "3 done, 1
//      cancelled", the first run is untouched
//   06 reload the window: both run nodes come back from the summaries, with their phases,
//      statuses, outcomes and agents, and the restored tab shows its run again
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { repoRoot } from '../../../scripts/e2e/paths.mjs';
import { SEL } from '../lib/flow.mjs';
import { slack } from '../lib/patience.mjs';

const require = createRequire(import.meta.url);
const { demoReply, DEMO_WORKFLOW } = require(join(repoRoot, 'out', 'test', 'support', 'demo-script.js'));

const ROOT = 'run a workflow';
const RUN = 'review-parts';
const PARTS = ['parser', 'store', 'webview'];
const SLOW_RUN = 'slow-review';
// Three answer (after a few seconds), the last streams for minutes until the run is cancelled.
const SLOW_PARTS = ['api', 'cli', 'docs', 'tests'];
const STREAMING_PART = 'tests';
const SLOW_TEXT = 'Reading one line at a time. '.repeat(300);

const isChild = (body) => body.messages.some((m) => m.role === 'user' && String(m.content ?? '').startsWith('[Arbor runtime] You are a subagent'));
const lastUserText = (body) => String([...body.messages].reverse().find((m) => m.role === 'user')?.content ?? '');

export const flow = {
  name: 'workflow',
  // A price for the demo model (per million tokens), so the run's Σ is in dollars too.
  settings: { 'arbor.prices': { 'arbor-demo': { input: 3, cacheHit: 0.3, output: 15 } } },
  // The demo scene, with each agent of the first run answering after 4 s (so a person, and this
  // flow, can watch the node fill in) and a second run ("slow workflow") whose agents stream for
  // minutes, to be cancelled.
  model: (model) =>
    model.setFallback((body) => {
      const last = body.messages.at(-1);
      if (isChild(body)) {
        const task = lastUserText(body);
        if (task.startsWith(`WORKFLOW: review the ${STREAMING_PART}`)) return { text: SLOW_TEXT, chunkSize: 4, chunkDelayMs: 100 };
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
                meta: { name: SLOW_RUN, description: 'Review four parts, one of them slowly (to be cancelled).' },
                args: { parts: SLOW_PARTS },
                concurrency: 4,
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
            cost: (e.querySelector('.detail .tokens')?.textContent ?? '').trim(),
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
      await sash.focus({ timeout: slack(10_000) });
      await sash.press('End', { timeout: slack(5_000) });
      await until(
        'the tree pane to grow',
        10_000,
        async () =>
          Number(await sash.getAttribute('aria-valuenow', { timeout: slack(2_000) })) >= 450 ||
          notYet(`tree height ${await sash.getAttribute('aria-valuenow')}`),
      );
      await send(ROOT);
      await visible(row(ROOT), `the conversation "${ROOT}" in the tree`, 20_000);
    });

    /**
     * The tab showing run `name`, found by what it shows (a run tab's heading), not by its
     * iframe's URL: the workbench keeps several webview frames, and which one is which changes.
     */
    const runTab = async (name) => {
      for (const f of page.frames()) {
        try {
          if ((await f.locator('.run h1').count()) === 0) continue;
          if (
            (
              await f
                .locator('.run h1')
                .first()
                .textContent({ timeout: slack(1_000) })
            )?.trim() === name
          )
            return f;
        } catch {
          // a frame that went away while we looked
        }
      }
      return notYet(`no tab shows the run "${name}" yet`);
    };
    /** Everything a run tab shows, in one round trip. */
    const readTab = (frame) =>
      frame.locator('.run').evaluate((el) => {
        const text = (sel, root = el) => (root.querySelector(sel)?.textContent ?? '').replace(/\s+/g, ' ').trim();
        return {
          name: text('h1'),
          status: el.querySelector('.title .status')?.getAttribute('title') ?? '',
          summary: text('.summary'),
          sigma: text('.sigma'),
          phases: [...el.querySelectorAll('.phase')].map((p) => `${text('.phase-title', p)} ${text('.state', p)}`),
          agents: [...el.querySelectorAll('.agent')].map((a) => ({ name: text('.agent-name', a), outcome: text('.outcome', a), cost: text('.agent-cost', a) })),
          log: text('.log'),
          result: text('.result'),
          error: text('.error'),
        };
      });
    const showTab = (t) =>
      `${t.status} | ${t.summary} | ${t.sigma} | phases ${t.phases.join(', ')} | agents ${t.agents.map((a) => `${a.name} ${a.outcome}`).join(', ')}`;

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
      if (!states.some((s) => /^running \| review · [1-3] running(, [1-2] done)?$/.test(s)))
        throw new Error(`the review phase was never seen with agents running (seen: ${states.join(' → ')})`);
      if (!states.some((s) => /^running \| summarise · 1 running, 3 done$/.test(s)))
        throw new Error(`the summarise phase was never seen running (seen: ${states.join(' → ')})`);
      if (!agentCounts.some((n) => n > 0 && n < 4))
        throw new Error(`the agents did not appear one phase at a time under the run node (counts seen: ${agentCounts.join(' → ')})`);
      const { all, run } = final;
      if (run.activity !== '4 agents · done') throw new Error(`the finished run reads "${run.activity}", not "4 agents · done"`);
      for (const want of ['completed · 4 agents, 0 running · 4 done', 'phases: review → summarise', 'log: reviewing 3 parts']) {
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
      await until('the parent to answer after the run', 20_000, async () =>
        (await chat.textContent({ timeout: slack(2_000) })).includes('The workflow finished'),
      );
    });

    let rowSigma = '';
    await step('open-the-run-tab', 60_000, async () => {
      // The row's Σ: its agents' cost together, in dollars (the demo model has a price here).
      rowSigma = await until(`the run node's Σ`, 10_000, async () => {
        const r = find(await rows(), RUN);
        return /^Σ \$\d+\.\d+$/.test(r?.cost ?? '') ? r.cost : notYet(`the row's cost reads "${r?.cost}"`);
      });
      await row(RUN)
        .first()
        .click({ timeout: slack(10_000) });
      const tabLabel = page.locator(`${SEL.editorTab} .label-name`, { hasText: new RegExp(`^${RUN}$`) });
      await visible(tabLabel, `an editor tab titled "${RUN}"`, 20_000);
      const frame = await until(`the tab to show the run "${RUN}"`, 30_000, () => runTab(RUN));
      const t = await until('the tab to show the whole run', 20_000, async () => {
        const v = await readTab(frame);
        return v.result && v.agents.length === 4 && v.sigma ? v : notYet(showTab(v));
      });
      say(`  run tab: ${showTab(t)}`);
      const want = {
        status: 'settled',
        summary: '4 agents · done',
        phases: ['review done', 'summarise done'],
        agents: [...PARTS, 'summary'].map((name) => `${name} done`),
      };
      const got = { status: t.status, summary: t.summary, phases: t.phases, agents: t.agents.map((a) => `${a.name} ${a.outcome}`) };
      if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`the run tab shows ${JSON.stringify(got)}, not ${JSON.stringify(want)}`);
      if (!t.agents.every((a) => /^\$\d+\.\d+$/.test(a.cost))) throw new Error(`an agent in the tab shows no cost: ${JSON.stringify(t.agents)}`);
      if (!t.log.includes('reviewing 3 parts')) throw new Error(`the tab's log reads "${t.log}"`);
      for (const key of ['"parts"', '"notes"', '"summary"'])
        if (!t.result.includes(key)) throw new Error(`the tab's result lacks ${key}: ${t.result.slice(0, 200)}`);
      // Σ in tokens and dollars, the same dollars as the row.
      const m = /^Σ (\$\d+\.\d+) · ([\d,]+) tokens$/.exec(t.sigma);
      if (!m || `Σ ${m[1]}` !== rowSigma || Number(m[2].replace(/,/g, '')) <= 0)
        throw new Error(`the tab's Σ "${t.sigma}" is not the row's "${rowSigma}" with its tokens`);
      if (await frame.getByText('Loading the transcript').count()) throw new Error('the run tab still says "Loading the transcript…"');
      await page.screenshot({ path: join(outDir, 'workflow-tab.png'), timeout: slack(15_000) });
      // An agent's name opens that agent's transcript. Clicked from inside the page: the tab's
      // frame is hidden the moment the new tab shows, and a pointer click would wait on it.
      await frame.locator('.agent .open', { hasText: 'summary' }).evaluate((el) => el.click(), undefined, { timeout: slack(10_000) });
      await visible(page.locator(`${SEL.editorTab} .label-name`, { hasText: /^summary$/ }), 'an editor tab titled "summary" (the agent\'s transcript)', 20_000);
    });

    await step('start-a-slow-workflow', 60_000, async () => {
      await send('now run a slow workflow');
      await until(`the run node "${SLOW_RUN}" to have three agents done and one running`, 50_000, async () => {
        const all = await rows();
        const run = find(all, SLOW_RUN);
        const running = agentsUnder(all, SLOW_RUN)
          .filter((a) => a.status === 'running')
          .map((a) => a.name);
        return run?.status === 'running' && run.activity === 'review · 1 running, 3 done' && running.join() === STREAMING_PART
          ? true
          : notYet(`${show(run)}; agents running: ${running.join(', ')}`);
      });
      // The side bar alone, for the README: a finished run and one under way.
      await page.screenshot({ path: join(outDir, 'workflow-side-bar.png'), clip: { x: 0, y: 36, width: 348, height: 500 }, timeout: slack(15_000) });
      // Its tab, from the node's context menu, follows it live.
      await contextMenu(row(SLOW_RUN).first(), 'Open Transcript');
      const frame = await until(`a tab to show the run "${SLOW_RUN}"`, 30_000, () => runTab(SLOW_RUN));
      await until(`the "${SLOW_RUN}" tab to show the run under way`, 20_000, async () => {
        const t = await readTab(frame);
        return t.summary === 'review · 1 running, 3 done' &&
          t.phases.join() === 'review running' &&
          t.agents.filter((a) => a.outcome === 'running').length === 1
          ? true
          : notYet(showTab(t));
      });
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
          agents.length === 4 &&
          agents.every((a) => a.status !== 'running' && a.status !== 'queued');
        return ended ? { all, run, agents } : notYet(`${show(run)}; agents: ${agents.map((a) => `${a.name} ${a.status}`).join(', ')}`);
      });
      say(`  cancelled run: ${show(final.run)}; agents: ${final.agents.map((a) => `${a.name} ${a.status}`).join(', ')}`);
      if (final.run.activity !== '3 done, 1 cancelled') throw new Error(`the cancelled run reads "${final.run.activity}", not "3 done, 1 cancelled"`);
      // The tab followed: the phase and the streaming agent cancelled, the run's error said.
      const frame = await until(`the tab to show "${SLOW_RUN}"`, 10_000, () => runTab(SLOW_RUN));
      // The whole of it, not the first frame with the new summary: the run's node and its record
      // reach the tab as two messages, and a read between them saw the summary before the phase
      // and the agents (a clean-clone run failed on that instant).
      const t = await until('the tab to show the cancelled run: its summary, its phase and its agent cancelled, its error', 20_000, async () => {
        const v = await readTab(frame);
        const streaming = v.agents.find((a) => a.name === STREAMING_PART);
        return v.summary === '3 done, 1 cancelled' && v.phases.join() === 'review cancelled' && streaming?.outcome === 'cancelled' && /^CANCELLED/.test(v.error)
          ? v
          : notYet(`${showTab(v)} | error "${v.error}"`);
      });
      say(`  cancelled run's tab: ${showTab(t)} | ${t.error}`);
      // Stopped means stopped: no agent's request is left streaming from the model server.
      await until('every model request to be closed', 20_000, async () => (model.inFlight === 0 ? true : notYet(`in flight: ${model.inFlight}`)));
      const first = find(final.all, RUN);
      if (first?.status !== 'settled' || first.activity !== '4 agents · done') throw new Error(`cancelling one run touched the other: ${show(first)}`);
    });

    await step('reload-and-find-both-runs', 150_000, async () => {
      await reload();
      await until('both run nodes to come back with their phases, statuses, outcomes and agents', 60_000, async () => {
        const all = await rows();
        const done = find(all, RUN);
        const cancelled = find(all, SLOW_RUN);
        const ok =
          done?.status === 'settled' &&
          done.activity === '4 agents · done' &&
          done.title.includes('phases: review → summarise') &&
          done.title.includes('completed · 4 agents') &&
          agentsUnder(all, RUN).length === 4 &&
          cancelled?.status === 'interrupted' &&
          cancelled.activity === '3 done, 1 cancelled' &&
          /^cancelled/.test(cancelled.title.split('\n')[1] ?? '') &&
          cancelled.title.includes('phases: review') &&
          agentsUnder(all, SLOW_RUN).length === 4;
        return (
          ok ||
          notYet(
            `${RUN}: ${show(done)} (${agentsUnder(all, RUN).length} agents); ${SLOW_RUN}: ${show(cancelled)} (${agentsUnder(all, SLOW_RUN).length} agents)`,
          )
        );
      });
      // The run tab open before the reload is restored and shows its run again.
      const frame = await until(`the restored tab to show "${SLOW_RUN}"`, 60_000, () => runTab(SLOW_RUN));
      await until('the restored tab to show the cancelled run', 30_000, async () => {
        const t = await readTab(frame);
        return t.summary === '3 done, 1 cancelled' && t.agents.length === 4 && t.phases.join() === 'review cancelled' ? true : notYet(showTab(t));
      });
    });
  },
};
