// Issue 15, points 2, 4 and 5: cost in the tree and a budget stopping a subtree, on the real
// VS Code workbench.
//   01 a conversation ("hello budget"); its node shows its cost (a price is set for the demo
//      model), the hover gives tokens in / cached / out and the cost
//   02 right-click its node → Set Budget, answer the input box (about sixteen requests' worth of
//      tokens): the node gets a budget bar
//   03 "audit three parts": three children in parallel keep asking the model; watch the budget
//      bar fill (several values seen on the way) while each node's cost grows
//   04 the budget stops the subtree: every child and the conversation read "stopped: budget",
//      the bar is at least at its 80 % warning, spending stayed within the budget, the chat says
//      "Turn ended: Stopped by its budget" with a Set Budget button; the hover says what the
//      cache saved
//   05 raise it with the chat's Set Budget button: nothing restarts by itself
//   06 send "go on": the conversation continues and completes
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { repoRoot } from '../../../scripts/e2e/paths.mjs';
import { SEL } from '../lib/flow.mjs';
import { slack } from '../lib/patience.mjs';

const require = createRequire(import.meta.url);
const { demoReply } = require(join(repoRoot, 'out', 'test', 'support', 'demo-script.js'));

const ROOT = 'hello budget';
const PARTS = ['parser', 'store', 'webview'];
const CONTINUED = 'Going on from where the budget stopped us: the three audits so far are enough to summarise.';

const isChild = (body) => body.messages.some((m) => m.role === 'user' && String(m.content ?? '').startsWith('[Arbor runtime] You are a subagent'));
const lastUserText = (body) => String([...body.messages].reverse().find((m) => m.role === 'user')?.content ?? '');

export const flow = {
  name: 'budget',
  // A price for the demo model (per million tokens), so the tree shows dollars and cache savings,
  // and a completion cap, so a budget check reserves a small bound per request.
  settings: {
    'arbor.prices': { 'arbor-demo': { input: 3, cacheHit: 0.3, output: 15 } },
    'arbor.model.maxTokens': 256,
  },
  // The audit scene: the conversation delegates three parts at once; each child lists the files
  // again and again (a second between steps), so only the budget ends their turns.
  model: (model) =>
    model.setFallback((body) => {
      const last = body.messages.at(-1);
      if (isChild(body)) {
        if (lastUserText(body).startsWith('AUDIT')) return { toolCalls: [{ name: 'list_files', arguments: { path: '.' } }], delayMs: 1_000 };
        return demoReply(body);
      }
      const said = last?.role === 'user' ? String(last.content ?? '').toLowerCase() : '';
      if (said.includes('audit three parts'))
        return {
          toolCalls: PARTS.map((p) => ({ name: 'subagent', arguments: { prompt: `AUDIT: audit the ${p}, step by step.`, label: `audit ${p}` } })),
        };
      if (said.includes('go on')) return { text: CONTINUED, chunkSize: 6, chunkDelayMs: 20 };
      return demoReply(body);
    }),
  async run({ page, panel, chat, model, row, send, contextMenu, openPanel, step, until, visible, say, outDir }) {
    const bar = () => row(ROOT).first().locator('button.budget');
    /** "budget: 12,345 of 60,000 tokens. Set the budget" → { spent, limit } */
    const barValue = async () => {
      const label = (await bar().getAttribute('aria-label', { timeout: slack(2_000) })) ?? '';
      const m = /budget: ([\d,]+) of ([\d,]+) tokens/.exec(label);
      return m ? { spent: Number(m[1].replace(/,/g, '')), limit: Number(m[2].replace(/,/g, '')) } : undefined;
    };
    /** Every tree row: name, the detail line's activity, its cost badge and its hover. */
    const rows = () =>
      panel.locator('[role="treeitem"]').evaluateAll((els) =>
        els.map((e) => {
          const label = e.getAttribute('aria-label') ?? '';
          return {
            name: label.slice(0, label.indexOf(', ')),
            status: label.slice(label.indexOf(', ') + 2).split(',')[0],
            activity: (e.querySelector('.detail .activity')?.textContent ?? '').replace(/\s+/g, ' ').trim(),
            cost: (e.querySelector('.detail .tokens')?.textContent ?? '').trim(),
            title: e.getAttribute('title') ?? '',
          };
        }),
      );
    const sideBar = (name) => page.screenshot({ path: join(outDir, name), clip: { x: 0, y: 36, width: 348, height: 560 }, timeout: slack(15_000) });
    let limit = 0;

    await step('cost-on-the-node', 150_000, async () => {
      await openPanel();
      await send(ROOT);
      await visible(row(ROOT), `the root "${ROOT}" in the tree`, 20_000);
      const root = await until('the root to show its cost in dollars', 20_000, async () =>
        (await rows()).find((r) => r.name === ROOT && /^\$/.test(r.cost) && r.cost !== '$0.00'),
      );
      const m = /tokens in ([\d,]+) \/ cached ([\d,]+) \/ out ([\d,]+)/.exec(root.title);
      if (!m) throw new Error(`the root's hover gives no tokens in / cached / out: ${root.title}`);
      if (!/cost \$/.test(root.title)) throw new Error(`the root's hover gives no cost: ${root.title}`);
      // About sixteen requests of this size: the children's turns cross it after a few steps each.
      const prompt = Number(m[1].replace(/,/g, ''));
      limit = Math.ceil((prompt * 16) / 1000) * 1000;
      say(`  root: ${root.cost}, its first request ${prompt} prompt tokens; budget ${limit} tokens`);
    });

    await step('set-budget-from-the-menu', 30_000, async () => {
      await contextMenu(row(ROOT).first(), 'Set Budget');
      const box = page.locator(SEL.quickInput);
      await visible(box, 'the budget input', 10_000);
      await box.fill(`${limit / 1000}k`, { timeout: slack(5_000) });
      await box.press('Enter');
      await visible(bar(), "the budget bar on the root's node", 10_000);
      const v = await until('the bar to read the new budget', 10_000, barValue);
      if (v.limit !== limit) throw new Error(`the bar's limit is ${v.limit}, not ${limit}`);
    });

    const seen = [];
    await step('watch-the-bar-fill', 120_000, async () => {
      const before = model.requests.length;
      await send('audit three parts');
      let shot = false;
      await until('every audit child to stop on the budget', 110_000, async () => {
        const v = await barValue().catch(() => undefined);
        if (v && v.spent !== seen.at(-1)) seen.push(v.spent);
        const all = await rows();
        const children = all.filter((r) => r.name.startsWith('audit '));
        // Mid-run, for the README: each node's cost, the bar on its way.
        if (!shot && v && v.spent > limit * 0.4 && children.length === 3 && children.every((c) => c.cost)) {
          shot = true;
          await sideBar('cost-in-tree.png');
        }
        return children.length === 3 && children.every((c) => c.activity === 'stopped: budget');
      });
      say(`  bar values seen (tokens spent of ${limit}): ${seen.join(' → ')}; ${model.requests.length - before} model requests`);
      const between = seen.filter((s) => s > 0 && s < limit);
      if (between.length < 2) throw new Error(`the bar did not fill step by step (values seen: ${seen.join(', ')})`);
      if (!shot) throw new Error('no moment with every child priced and the bar past 40 % was seen');
    });

    await step('budget-stop-in-the-chat', 30_000, async () => {
      await until('the root to stop on the budget', 20_000, async () => (await rows()).find((r) => r.name === ROOT)?.activity === 'stopped: budget');
      const notice = chat.locator('.msg', { hasText: 'Turn ended: Stopped by its budget' }).last();
      await visible(notice, 'the budget stop in the chat', 10_000);
      const text = (await notice.textContent({ timeout: slack(2_000) })).replace(/\s+/g, ' ');
      // In people's words (issue 21.6): what was used of what, what the next step needs, what to do.
      if (!/Budget reached: [\d.]+k? of [\d.]+k? tokens used; the next step needs about [\d.]+k?\. Raise the budget to go on\./.test(text))
        throw new Error(`the budget stop reads: ${text}`);
      if (/arbor run|--budget|--max-tokens/.test(text)) throw new Error(`the budget stop gives a command-line hint inside VS Code: ${text}`);
      await visible(notice.locator('vscode-button', { hasText: 'Set Budget' }), 'Set Budget in the budget stop', 5_000);
      const v = await barValue();
      if (v.spent > v.limit) throw new Error(`the subtree spent ${v.spent} of a ${v.limit}-token budget`);
      const cls = (await bar().getAttribute('class', { timeout: slack(2_000) })) ?? '';
      if (!/\bwarn\b|\bover\b/.test(cls)) throw new Error(`the bar is not at its warning (${v.spent} of ${v.limit}; class ${cls})`);
      // Stopped, not running: a one-shot child released as its turn ended must not keep its running badge.
      await until('every node to read interrupted (a stop, not a failure)', 10_000, async () => (await rows()).every((r) => r.status === 'interrupted'));
      const root = (await rows()).find((r) => r.name === ROOT);
      if (!/saved \$[\d.]+ by cache hits/.test(root.title)) throw new Error(`the root's hover says nothing of the cache saving: ${root.title}`);
      say(`  spent ${v.spent} of ${v.limit} tokens; root hover: ${root.title.split('\n').slice(3).join(' | ')}`);
      await page.screenshot({ path: join(outDir, 'budget-stop.png'), clip: { x: 0, y: 36, width: 348, height: 720 }, timeout: slack(15_000) });
    });

    await step('raise-it-nothing-restarts', 30_000, async () => {
      const before = model.requests.length;
      await chat
        .locator('.msg', { hasText: 'Turn ended: Stopped by its budget' })
        .last()
        .locator('vscode-button', { hasText: 'Set Budget' })
        .click({ timeout: slack(5_000) });
      const box = page.locator(SEL.quickInput);
      await visible(box, 'the budget input', 10_000);
      await until('the input to hold the current budget', 5_000, async () => (await box.inputValue({ timeout: slack(1_000) })) === String(limit));
      await box.fill('1M', { timeout: slack(5_000) });
      await box.press('Enter');
      await until('the bar to read the raised budget', 10_000, async () => (await barValue())?.limit === 1_000_000);
      await new Promise((r) => setTimeout(r, 2_000));
      if (model.requests.length !== before) throw new Error(`raising the budget started ${model.requests.length - before} request(s) by itself`);
    });

    await step('send-and-continue', 30_000, async () => {
      await send('go on');
      await until('the conversation to continue', 20_000, async () => (await chat.textContent({ timeout: slack(2_000) })).includes(CONTINUED));
      await until('the root to settle without a stop', 10_000, async () => {
        const r = (await rows()).find((x) => x.name === ROOT);
        return r && r.activity === '' && /last stop: completed/.test(r.title);
      });
    });
  },
};
