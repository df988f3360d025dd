// Issue 12, points 4–6: a goal in the panel, on the real VS Code workbench.
//   01 a conversation; right-click its node → Set Goal, objective and a limit of 2 rounds
//   02 watch two rounds run by themselves (the node reads active · 1/2, active · 2/2; each
//      round's answer lands in the chat), then the goal blocks at round-limit: the node reads
//      blocked · 2/2 with the reason on hover, the goal bar shows round-limit
//   03 Resume is not offered while the rounds are used up; Raise limit asks by how much, Raise (5) → blocked · 2/7
//   04 Resume in the goal bar: rounds 3 to 7 run, then it blocks at round-limit again
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { repoRoot } from '../../../scripts/e2e/paths.mjs';
import { SEL } from '../lib/flow.mjs';
import { slack } from '../lib/patience.mjs';

const require = createRequire(import.meta.url);
const { demoReply, DEMO_GOAL_ROUND } = require(join(repoRoot, 'out', 'test', 'support', 'demo-script.js'));

export const flow = {
  name: 'goal',
  // Each round's first reply waits a little, so a person (and this flow) can watch the rounds go by.
  model: (model) =>
    model.setFallback((body) => {
      const last = body.messages.at(-1);
      const reply = demoReply(body);
      return last?.role === 'user' && DEMO_GOAL_ROUND.test(String(last.content ?? '')) ? { ...reply, delayMs: 700 } : reply;
    }),
  async run({ page, chat, row, send, contextMenu, openPanel, step, until, visible, say, outDir }) {
    const ROOT = 'hello goal';
    const badge = () => row(ROOT).locator('.goal');
    const badgeText = async () => ((await badge().textContent({ timeout: slack(2_000) })) ?? '').replace(/\s+/g, ' ').trim();
    const bar = chat.locator('.goal-bar');
    const seen = new Set();
    /** Polls the node's goal badge, remembering every text it showed, until `want` shows. */
    const watchUntil = (want, timeoutMs) =>
      until(`the goal badge to read "${want}" (seen: ${[...seen].join(', ')})`, timeoutMs, async () => {
        const t = await badgeText();
        if (t) seen.add(t);
        return t === want;
      });

    await step('set-goal', 150_000, async () => {
      await openPanel();
      await send(ROOT);
      await visible(row(ROOT), `the root "${ROOT}" in the tree`, 20_000);
      await until(
        'the first answer to end',
        20_000,
        async () => (await chat.locator('.assistant').count()) > 0 || (await chat.textContent()).includes('Arbor demo'),
      );
      await contextMenu(row(ROOT).first(), 'Set Goal');
      const box = page.locator(SEL.quickInput);
      await visible(box, 'the objective input', 10_000);
      await box.fill('tidy the workspace', { timeout: slack(5_000) });
      await box.press('Enter');
      await until('the round limit input (prefilled with 10)', 10_000, async () => (await box.inputValue({ timeout: slack(1_000) })) === '10');
      await box.fill('2', { timeout: slack(5_000) });
      await box.press('Enter');
    });

    await step('two-rounds-then-round-limit', 60_000, async () => {
      await watchUntil('blocked · 2/2', 50_000);
      say(`  badge texts seen: ${[...seen].join(' → ')}`);
      if (!seen.has('active · 1/2') && !seen.has('active · 2/2')) throw new Error(`no round was seen running (seen: ${[...seen].join(', ')})`);
      const title = await badge().getAttribute('title', { timeout: slack(2_000) });
      if (!/round-limit/.test(title ?? '')) throw new Error(`the badge's hover does not give the block reason: ${title}`);
      await visible(bar, 'the goal bar', 5_000);
      const text = await bar.textContent({ timeout: slack(2_000) });
      if (!/tidy the workspace/.test(text) || !/round-limit/.test(text) || !/2\/2/.test(text)) throw new Error(`goal bar reads: ${text}`);
      const transcript = await chat.textContent({ timeout: slack(2_000) });
      for (const n of [1, 2]) if (!transcript.includes(`Round ${n} done`)) throw new Error(`round ${n}'s answer is not in the chat`);
    });

    await step('raise-limit', 20_000, async () => {
      if ((await bar.locator('button', { hasText: /^Resume$/ }).count()) > 0) throw new Error('Resume is offered while every round is used');
      await bar.locator('button', { hasText: /^Raise limit$/ }).click({ timeout: slack(5_000) });
      // It asks by how much (five rounds unless changed); Raise sends it.
      await visible(bar.locator('.raise input'), 'the "raise the limit by" box', 5_000);
      await bar.locator('.raise button', { hasText: /^Raise$/ }).click({ timeout: slack(5_000) });
      await watchUntil('blocked · 2/7', 10_000);
      await visible(bar.locator('button', { hasText: /^Resume$/ }), 'Resume in the goal bar', 5_000);
      // The side bar alone, for the README.
      await page.screenshot({ path: join(outDir, 'goal-side-bar.png'), clip: { x: 0, y: 36, width: 348, height: 700 }, timeout: slack(15_000) });
    });

    await step('resume-runs-to-the-new-limit', 90_000, async () => {
      seen.clear();
      await bar.locator('button', { hasText: /^Resume$/ }).click({ timeout: slack(5_000) });
      await watchUntil('blocked · 7/7', 80_000);
      say(`  badge texts seen: ${[...seen].join(' → ')}`);
      if (![...seen].some((t) => /^active · [3-7]\/7$/.test(t))) throw new Error(`no resumed round was seen running (seen: ${[...seen].join(', ')})`);
      const transcript = await chat.textContent({ timeout: slack(2_000) });
      if (!transcript.includes('Round 7 done')) throw new Error("round 7's answer is not in the chat");
    });
  },
};
