// Issue 14, the acp provider's UI test: any ACP agent as a child in the tree of the real VS Code
// workbench, asking permission through the panel. The agent is the SDK 1.9.0 scripted example
// agent (.tools/acp-agents, `npm run setup:acp`; no model: text, a read call, then an edit it
// asks permission for, about a second per step).
//   01 open the panel; the user's (machine) settings configure the agent as `arbor.remote.acp`
//      "example", so the harness registers delegate_acp_example; child approval is `escalate`
//   02 "ask the example agent to fix the config": the conversation delegates; the ACP child
//      appears in the tree with its `acp:example` badge and streams: its chat shows the agent's
//      text and its read call
//   03 its permission request is an approval card in the panel: `acp:edit`, asked by the
//      child (its label), the lineage conversation › child, the agent's own title; the child's
//      row reads "needs approval"
//   04 Allow once: the agent is answered allow_once and says it updated the configuration; the
//      child settles, the conversation answers and is idle, and no process of the agent is left
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../../scripts/e2e/paths.mjs';
import { slack } from '../lib/patience.mjs';

const EXAMPLE = join(repoRoot, '.tools', 'acp-agents', 'node_modules', '@agentclientprotocol', 'sdk', 'dist', 'examples', 'agent.js');
const ROOT = 'ask the example agent to fix the config';
const LABEL = 'config fixer';
const PARENT_ANSWER = 'The example agent updated the configuration after you allowed it.';

// The code-server user-data folder: machine-scoped settings of a remote window (code-server's
// extension host is one) are read from its Machine settings, so `arbor.remote.acp` is written
// there too. Made when the flow runs (every flow file is imported, whichever flows run),
// removed at exit.
let userDataDir;
function flowUserData() {
  if (!userDataDir) {
    userDataDir = mkdtempSync(join(tmpdir(), 'arbor-ui-flow-acp-ud-'));
    process.once('exit', () => rmSync(userDataDir, { recursive: true, force: true }));
  }
  return userDataDir;
}

/** Live processes running the example agent's script: pid → process group. */
function agentProcesses() {
  const found = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (!readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').includes(EXAMPLE)) continue;
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] !== 'Z') found.set(Number(d), Number(fields[2]));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

export const flow = {
  name: 'acp',
  timeoutMs: 240_000,
  get userDataDir() {
    return flowUserData();
  },
  settings: () => {
    if (!existsSync(EXAMPLE)) throw new Error(`${EXAMPLE} is not installed. Run: npm run setup:acp`);
    const machine = {
      'arbor.remote.acp': [{ name: 'example', command: process.execPath, args: [EXAMPLE], description: 'The ACP SDK scripted example agent' }],
    };
    mkdirSync(join(flowUserData(), 'Machine'), { recursive: true });
    writeFileSync(join(flowUserData(), 'Machine', 'settings.json'), `${JSON.stringify(machine, null, 2)}\n`);
    return { ...machine, 'arbor.subagents.childApproval': 'escalate', 'arbor.policy.approval': 'ask' };
  },
  // The conversation delegates to the ACP agent (which needs no model), then answers.
  model: (model) =>
    model.setFallback((body) => {
      const last = body.messages.at(-1);
      if (last?.role === 'tool') return { text: PARENT_ANSWER };
      if (last?.role === 'user' && String(last.content ?? '').includes(ROOT))
        return { toolCalls: [{ name: 'delegate_acp_example', arguments: { prompt: 'Fix the database host in config.json.', label: LABEL } }] };
      return { text: 'ok' };
    }),
  async run({ panel, chat, row, rowWith, send, openPanel, selectRow, step, until, visible, say }) {
    const cards = chat.locator('.approval');
    const chatText = async () => (await chat.locator('[role="log"]').textContent({ timeout: slack(2_000) })) ?? '';

    await step('open-panel', 120_000, async () => {
      await openPanel();
      await until('the panel to be ready (snapshot received)', 60_000, async () =>
        (await panel.locator('.tree-body').textContent({ timeout: slack(2_000) }))?.includes('No conversations yet'),
      );
    });

    await step('acp-child-streams', 90_000, async () => {
      await send(ROOT);
      await visible(row(LABEL).first(), `'${LABEL}' in the tree`, 60_000);
      const badge = row(LABEL).first().locator('.meta.remote');
      await until('the acp:example badge on the node', 30_000, async () => (await badge.textContent({ timeout: slack(2_000) }))?.trim() === 'acp:example');
      say(`  badge: ${JSON.stringify(await badge.textContent())} (hover: ${JSON.stringify(await badge.getAttribute('title'))})`);
      await selectRow(LABEL);
      const first = await until("the agent's first text in the child's chat", 30_000, async () => {
        const t = await chatText();
        return t.includes("I'll help you with that") ? t : undefined;
      });
      // The agent goes on (its read call, more text) before it asks: the chat grows while it streams.
      const later = await until("the agent's next text in the child's chat", 30_000, async () => {
        const t = await chatText();
        return t.includes('Now I understand the project structure') ? t : undefined;
      });
      say(`  child chat: ${first.length} then ${later.length} characters`);
      if (!/acp:read|Reading project files/.test(later))
        throw new Error(`the child's chat does not show the agent's read call: ${JSON.stringify(later.slice(0, 400))}`);
      if (agentProcesses().size === 0) throw new Error('no process of the example agent is running');
    });

    await step('permission-request-in-panel', 60_000, async () => {
      const card = await visible(cards.first(), "the approval card for the agent's permission request", 30_000);
      const label = (await card.getAttribute('aria-label', { timeout: slack(5_000) })) ?? '';
      if (label !== `Approval requested by ${LABEL}: acp:edit`) throw new Error(`the card is labelled ${JSON.stringify(label)}`);
      const who = ((await card.locator('.who strong').textContent({ timeout: slack(5_000) })) ?? '').trim();
      if (who !== LABEL) throw new Error(`the card says it was asked by ${JSON.stringify(who)}`);
      const crumbs = (await card.locator('.lineage .crumb').allTextContents()).map((s) => s.trim());
      say(`  lineage: ${crumbs.join(' › ')}`);
      if (crumbs.length !== 2 || crumbs[1] !== LABEL) throw new Error(`the card's lineage is ${JSON.stringify(crumbs)} (want the conversation › ${LABEL})`);
      const summary = (await card.locator('.summary').textContent({ timeout: slack(5_000) })) ?? '';
      if (!summary.includes('Modifying critical configuration file')) throw new Error(`the card's summary is ${JSON.stringify(summary)}`);
      const reason = (await card.locator('.reason').textContent({ timeout: slack(5_000) })) ?? '';
      if (!reason.includes('acp:example') || !reason.includes('allow_once')) throw new Error(`the card's reason is ${JSON.stringify(reason)}`);
      if ((await card.locator('.allow-conversation').count()) !== 0)
        throw new Error('the card offers "Allow for this conversation" for an agent that may only be allowed once');
      // The agent hears only reject_once: the card asks for no reason that would reach nobody.
      if ((await card.locator('.deny-reason').count()) !== 0) throw new Error('the card asks for a deny reason the ACP agent would never hear');
      await visible(card.locator('.no-reason'), 'the note that the agent hears only the refusal', 5_000);
      await visible(rowWith(LABEL, 'needs approval'), `'${LABEL}' needing approval in the tree`, 10_000);
      await visible(row(LABEL).first().locator('.needs-you'), 'the "needs you" mark on the asking row', 5_000);
    });

    await step('allow-from-the-panel', 60_000, async () => {
      await cards
        .first()
        .locator('.allow-once')
        .click({ timeout: slack(10_000) });
      await until('the agent to say it updated the configuration', 30_000, async () =>
        (await chatText()).includes("I've successfully updated the configuration"),
      );
      await until('no approval card left', 10_000, async () => (await cards.count()) === 0);
      await visible(rowWith(LABEL, 'settled'), `'${LABEL}' settled`, 30_000);
      const text = await chatText();
      if (text.includes('prefer not to make that change')) throw new Error('the agent heard a rejection');
      await visible(rowWith(ROOT, 'idle'), 'the conversation idle again (its turn over)', 30_000);
      await until('the example agent to be gone', 15_000, async () => agentProcesses().size === 0);
      await selectRow(ROOT);
      await until("the conversation's answer", 15_000, async () => (await chatText()).includes(PARENT_ANSWER));
    });
  },
};
