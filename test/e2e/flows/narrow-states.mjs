// Issue 21.5 and 21.6 in the real VS Code: the rows and cards that need you, in a narrow side bar.
//   01 one conversation streams a long answer (a RUNNING root): the tree takes the height of its
//      one row, the chat the rest (measured panes), not 40 % of the side bar
//   02 a second conversation asks to run the tests (an APPROVAL-WAITING root, its card in the chat)
//   03 a third delegates to Claude Code (the pinned program, offline): a RUNNING remote child with
//      its program/version badge
//   04/05 side bar at 300 px and 220 px: each of those three rows draws at least 12 characters of
//      its name (counted glyph by glyph from the rendered text) before any metadata, the remote
//      badge stays on the running child, "needs approval" is its icon alone; the tree now takes
//      its rows' height (four rows) up to 40 %
//   06 at 220 px the approval card shows its title, command, scope and buttons in the chat's view,
//      nothing sideways; "Allow for this conversation" is offered (a plain command)
//   07 the Claude Code child is one-shot: its composer says it takes no messages (its name, no
//      id) and "Message the parent" shows the conversation with the keyboard in its input
//   08 at 300 px a goal blocked at its limit, raised (it asks by how much): blocked · 1/6 with
//      Resume, Raise limit, Clear — no Pause — on one line, nothing clipped or outside the bar
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { repoRoot } from '../../../scripts/e2e/paths.mjs';
import { CLAUDE_PINNED, claudeFlowDirs, claudeSettings } from '../lib/claude-code.mjs';
import { slack } from '../lib/patience.mjs';
import { measureRows, sideBarWidth } from '../lib/side-bar.mjs';

const require = createRequire(import.meta.url);
const { demoReply } = require(join(repoRoot, 'out', 'test', 'support', 'demo-script.js'));

const RUNNING = 'please keep streaming a long answer for the narrow side bar';
const APPROVAL = 'please run the tests before the release';
const REMOTE = 'please ask claude about process groups';
const GOAL = 'please hold a goal for the release notes';
const LABEL = 'claude helper for process groups';
const SLOW = 'A process group is one signal target for a whole program and its helpers. '.repeat(80);
const MIN_CHARS = 12;

let dirs;
const flowDirs = () => (dirs ??= claudeFlowDirs('ui-flow-narrow'));

export const flow = {
  name: 'narrow-states',
  timeoutMs: 420_000,
  get userDataDir() {
    return flowDirs().userDataDir;
  },
  settings: (model) => ({ ...claudeSettings(model, flowDirs()), 'arbor.policy.approval': 'ask' }),
  model: (model) =>
    model.setFallback((body, i) => {
      // Claude Code's own requests: a reply streamed for minutes.
      if (model.requests[i]?.wire === 'messages') return { text: SLOW, chunkSize: 6, chunkDelayMs: 150 };
      const last = body.messages.at(-1);
      const said = String(last?.content ?? '');
      if (last?.role === 'user' && said.includes(RUNNING)) return { text: SLOW, chunkSize: 4, chunkDelayMs: 300 };
      if (last?.role === 'user' && said.includes(REMOTE))
        return { toolCalls: [{ name: 'delegate_claude_code', arguments: { prompt: 'Explain process groups in a few paragraphs.', label: LABEL } }] };
      return demoReply(body);
    }),
  async run({ page, panel, chat, row, rowWith, send, command, contextMenu, openPanel, selectRow, step, until, visible, sleep, say, outDir, SEL }) {
    const panes = () =>
      panel.locator('.panel').evaluate((p) => ({
        panel: p.getBoundingClientRect().height,
        tree: p.querySelector('.tree-pane').getBoundingClientRect().height,
        chat: p.querySelector('.chat-pane').getBoundingClientRect().height,
        rows: p.querySelectorAll('[role="treeitem"]').length,
      }));
    async function newConversation(text) {
      await command('Arbor: New Conversation');
      await until('the chat to be empty (a new conversation)', 15_000, async () => (await panel.locator('.examples button').count()) > 0);
      await send(text);
      await visible(row(text), `the root "${text}" in the tree`, 20_000);
    }

    await step('running-root-one-row-split', 150_000, async () => {
      await visible(page.locator(SEL.activityIcon), 'the Arbor activity-bar icon (is the extension loading?)', 90_000);
      await openPanel();
      await send(RUNNING);
      await visible(rowWith(RUNNING, 'running'), 'the running root', 30_000);
      const g = await panes();
      say(`  panes with one row: ${JSON.stringify(g)}`);
      if (g.rows !== 1) throw new Error(`expected one row, saw ${g.rows}`);
      // The pane's header (24) and one 40 px row, give or take: not 40 % of the side bar.
      if (g.tree > 24 + 40 + 12) throw new Error(`one row takes ${g.tree} px of ${g.panel} for the tree`);
      if (g.chat < g.panel - g.tree - 10) throw new Error(`the chat has ${g.chat} px of ${g.panel} beside a ${g.tree} px tree`);
    });

    await step('approval-waiting-root', 60_000, async () => {
      await newConversation(APPROVAL);
      await visible(rowWith(APPROVAL, 'needs approval'), 'the root waiting for approval', 30_000);
      await visible(chat.locator('.approval'), 'its approval card', 10_000);
    });

    await step('running-remote-child', 120_000, async () => {
      await newConversation(REMOTE);
      await visible(rowWith(LABEL, 'running'), `'${LABEL}' running`, 60_000);
      const badge = row(LABEL).first().locator('.meta.remote');
      await until(
        'the program/version badge',
        60_000,
        async () => (await badge.textContent({ timeout: slack(2_000) }))?.trim() === `claude-code ${CLAUDE_PINNED}`,
      );
    });

    for (const width of [300, 220]) {
      await step(`rows-that-need-you-at-${width}px`, 40_000, async () => {
        await sideBarWidth(page, width, sleep);
        await sleep(400);
        const rows = await panel.locator('[role="treeitem"]').evaluateAll(measureRows);
        say(`  ${width} px: ${rows.map((r) => `${r.name} [${r.shown} chars; meta ${r.meta.join(',')}; word ${r.wordShown}]`).join(' | ')}`);
        const find = (name, status) => {
          const r = rows.find((x) => x.label.startsWith(`${name}, `));
          if (!r) throw new Error(`no row "${name}" at ${width} px`);
          if (!r.label.startsWith(`${name}, ${status}`)) throw new Error(`"${name}" is not ${status}: ${r.label}`);
          return r;
        };
        const checked = [find(RUNNING, 'running'), find(APPROVAL, 'needs approval'), find(LABEL, 'running')];
        for (const r of checked) {
          const want = Math.min(MIN_CHARS, r.name.length);
          if (!r.nameOnFirstLine || r.shown < want)
            throw new Error(`at ${width} px "${r.name}" draws ${r.shown} characters (want ≥ ${want}): ${JSON.stringify(r)}`);
          if (r.metaLeft !== undefined && r.metaLeft < r.nameLeft) throw new Error(`at ${width} px metadata comes before "${r.name}": ${JSON.stringify(r)}`);
        }
        const [, approval, remote] = checked;
        if (approval.wordShown) throw new Error(`at ${width} px "needs approval" is spelled out beside the shield: ${JSON.stringify(approval)}`);
        if (!remote.remoteShown) throw new Error(`at ${width} px the running remote child lost its program badge: ${JSON.stringify(remote)}`);
        const g = await panes();
        say(`  panes: ${JSON.stringify(g)}`);
        const wants = 24 + g.rows * 40;
        if (g.tree < Math.min(wants, Math.round(g.panel * 0.4)) - 2 || g.tree > Math.min(wants + 8, Math.round(g.panel * 0.4) + 2))
          throw new Error(`the tree is ${g.tree} px for ${g.rows} rows in a ${g.panel} px panel`);
        await page.screenshot({ path: join(outDir, `rows-${width}px.png`), clip: await page.locator('.part.sidebar').boundingBox() });
      });
    }

    await step('approval-card-at-220px', 30_000, async () => {
      await selectRow(APPROVAL);
      const card = await visible(chat.locator('.approval'), 'the approval card', 10_000);
      await card.locator('.allow-conversation').waitFor({ state: 'visible', timeout: slack(5_000) });
      const problems = await chat.evaluate((c) => {
        const out = [];
        const scroller = c.querySelector('.scroller');
        const s = scroller.getBoundingClientRect();
        if (scroller.scrollWidth > scroller.clientWidth + 1) out.push(`the chat scrolls sideways: ${scroller.scrollWidth} > ${scroller.clientWidth}`);
        const card = c.querySelector('.approval');
        const k = card.getBoundingClientRect();
        if (k.right > s.right + 1) out.push(`the card is wider than the chat by ${Math.round(k.right - s.right)} px`);
        for (const sel of ['.head .title', '.summary', '.allow-once', '.allow-conversation', '.deny-button']) {
          const r = card.querySelector(sel).getBoundingClientRect();
          if (r.width === 0 || r.right > k.right + 1 || r.left < k.left - 1) out.push(`${sel} is not drawn inside the card`);
          if (r.top < s.top - 1 || r.bottom > s.bottom + 1) out.push(`${sel} is out of the chat's view`);
        }
        return out;
      });
      if (problems.length) throw new Error(`at 220 px: ${problems.join('; ')}`);
      const summary = (await card.locator('.summary').textContent({ timeout: slack(5_000) })) ?? '';
      if (!summary.includes('$ npm test')) throw new Error(`the card's command reads ${JSON.stringify(summary)}`);
      await page.screenshot({ path: join(outDir, 'approval-card-220px.png'), clip: await page.locator('.part.sidebar').boundingBox() });
    });

    await step('one-shot-child-composer', 30_000, async () => {
      await selectRow(LABEL);
      const note = (
        (await (await visible(panel.locator('.composer .closed'), 'the note that it takes no messages', 10_000)).textContent({ timeout: slack(5_000) })) ?? ''
      )
        .replace(/\s+/g, ' ')
        .trim();
      say(`  composer: ${note}`);
      if (!note.includes(`“${LABEL}” was one run of claude-code: it takes no messages.`) || !note.includes(`message “${REMOTE}”`))
        throw new Error(`the composer says ${JSON.stringify(note)}`);
      if (/\bs-[a-z0-9]+-|continuable|follow-ups/.test(note))
        throw new Error(`the composer shows an id or advice meant for the model: ${JSON.stringify(note)}`);
      if ((await panel.locator('.composer vscode-textarea').count()) !== 0) throw new Error('the composer still offers an input');
      await panel.locator('.composer vscode-button.message-parent').click({ timeout: slack(10_000) });
      await until(
        `the chat header to show "${REMOTE}"`,
        10_000,
        async () =>
          (
            await chat
              .locator('.head .name')
              .first()
              .textContent({ timeout: slack(2_000) })
          )?.trim() === REMOTE,
      );
      await until("the keyboard in the conversation's input", 10_000, async () =>
        panel.locator('body').evaluate(() => document.activeElement?.tagName === 'VSCODE-TEXTAREA'),
      );
    });

    await step('blocked-goal-bar-at-300px', 120_000, async () => {
      await sideBarWidth(page, 300, sleep);
      await newConversation(GOAL);
      await visible(rowWith(GOAL, 'idle'), 'the goal conversation idle after its answer', 30_000);
      await contextMenu(row(GOAL).first(), 'Set Goal');
      const box = page.locator(SEL.quickInput);
      await visible(box, 'the objective input', 10_000);
      await box.fill('write the release notes for every change since the last tag', { timeout: slack(5_000) });
      await box.press('Enter');
      await until('the round limit input (prefilled with 10)', 10_000, async () => (await box.inputValue({ timeout: slack(1_000) })) === '10');
      await box.fill('1', { timeout: slack(5_000) });
      await box.press('Enter');
      const badge = row(GOAL).first().locator('.goal');
      await until(
        'the goal to block at its limit (blocked · 1/1)',
        60_000,
        async () => (await badge.textContent({ timeout: slack(2_000) }))?.trim() === 'blocked · 1/1',
      );
      const bar = chat.locator('.goal-bar');
      await bar.locator('button', { hasText: /^Raise limit$/ }).click({ timeout: slack(5_000) });
      const more = await visible(bar.locator('.raise input'), 'the "raise the limit by" box', 5_000);
      if ((await more.inputValue({ timeout: slack(2_000) })) !== '5') throw new Error('Raise limit does not ask by how much (five unless changed)');
      await bar.locator('.raise button', { hasText: /^Raise$/ }).click({ timeout: slack(5_000) });
      await until('the raised goal (blocked · 1/6)', 15_000, async () => (await badge.textContent({ timeout: slack(2_000) }))?.trim() === 'blocked · 1/6');
      const buttons = (await bar.locator('.meta button').allTextContents()).map((s) => s.trim());
      if (JSON.stringify(buttons) !== JSON.stringify(['Resume', 'Raise limit', 'Clear'])) throw new Error(`the blocked goal offers ${JSON.stringify(buttons)}`);
      const fit = await bar.evaluate((b) => {
        const out = [];
        const r = b.getBoundingClientRect();
        if (b.scrollWidth > b.clientWidth + 1) out.push(`the bar overflows: ${b.scrollWidth} > ${b.clientWidth}`);
        for (const el of b.querySelectorAll('.meta > *, .objective')) {
          const e = el.getBoundingClientRect();
          if (el.classList.contains('spacer')) continue;
          if (e.width === 0 || e.right > r.right + 0.5 || e.left < r.left - 0.5) out.push(`outside the bar: ${el.textContent}`);
          // Clipped without a way to read it (the bar's title has the whole goal).
          if (el.scrollWidth > el.clientWidth + 1 && !el.classList.contains('objective') && !el.classList.contains('reason'))
            out.push(`clipped: ${el.textContent}`);
        }
        const mids = [...b.querySelectorAll('.meta > *')]
          .filter((el) => el.getBoundingClientRect().width > 0)
          .map((el) => (el.getBoundingClientRect().top + el.getBoundingClientRect().bottom) / 2);
        if (Math.max(...mids) - Math.min(...mids) > 4) out.push(`the state and actions wrap to ${mids.length} items on more than one line`);
        return out;
      });
      if (fit.length) throw new Error(`the goal bar at 300 px: ${fit.join('; ')}`);
      await page.screenshot({ path: join(outDir, 'goal-blocked-300px.png'), clip: await page.locator('.part.sidebar').boundingBox() });
    });
  },
};
