// Issue 13, point 5 and its UI test: a remote child (the real, pinned Claude Code from
// .tools/remote, `npm run setup:remote`) in the tree of the real VS Code workbench.
//   01 open the panel; the user's settings name the pinned `claude` and point it at this flow's
//      model server (Anthropic Messages SSE), so the harness registers delegate_claude_code
//   02 "ask claude about process groups": the conversation delegates; a child appears in the tree
//      with its program/version badge (claude-code 2.1.332)
//   03 it streams: its live reply grows while Claude Code's text deltas arrive
//   04 Interrupt Agent on its node: it reads interrupted, and the program's process group (found
//      by its own config dir in /proc) is gone, with no process of it left
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../../scripts/e2e/paths.mjs';
import { slack } from '../lib/patience.mjs';

const CLAUDE_BIN = join(repoRoot, '.tools', 'remote', 'node_modules', '.bin', 'claude');
const PINNED = '2.1.332';
const ROOT = 'ask claude about process groups';
const LABEL = 'claude helper';
const SLOW_TEXT = 'A process group is one signal target for a whole program and its helpers. '.repeat(60);

// Claude Code's own state folder (outside the temp dir, as the remote tier keeps it), and the
// code-server user-data folder: machine-scoped settings of a remote window (code-server's
// extension host is one) are read from its Machine settings, so they are written there too.
// Made when the flow runs (every flow file is imported, whichever flows run), removed at exit.
let dirs;
function flowDirs() {
  if (!dirs) {
    const homes = join(repoRoot, '.tools', 'remote', 'homes');
    mkdirSync(homes, { recursive: true });
    dirs = { claudeHome: mkdtempSync(join(homes, 'ui-flow-claude-')), userDataDir: mkdtempSync(join(homes, 'ui-flow-ud-')) };
    process.once('exit', () => {
      rmSync(dirs.claudeHome, { recursive: true, force: true });
      rmSync(dirs.userDataDir, { recursive: true, force: true });
    });
  }
  return dirs;
}

/** Processes whose environment names this flow's Claude config dir: pid → process group. */
function claudeProcesses() {
  const found = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (!readFileSync(`/proc/${d}/environ`, 'utf8').split('\0').includes(`CLAUDE_CONFIG_DIR=${flowDirs().claudeHome}`)) continue;
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] !== 'Z') found.set(Number(d), Number(fields[2]));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/** Whether any live process is in group `pgid`. */
function groupAlive(pgid) {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') return true;
    } catch {
      // gone
    }
  }
  return false;
}

export const flow = {
  name: 'remote',
  timeoutMs: 300_000,
  get userDataDir() {
    return flowDirs().userDataDir;
  },
  settings: (model) => {
    if (!existsSync(CLAUDE_BIN)) throw new Error(`${CLAUDE_BIN} is not installed. Run: npm run setup:remote`);
    const { claudeHome, userDataDir } = flowDirs();
    const remote = {
      'arbor.remote.claudeCode.command': CLAUDE_BIN,
      'arbor.remote.claudeCode.model': 'claude-sonnet-4-5',
      'arbor.remote.claudeCode.home': claudeHome,
      'arbor.remote.claudeCode.env': {
        ANTHROPIC_BASE_URL: `http://127.0.0.1:${model.port}`,
        ANTHROPIC_API_KEY: 'dummy',
        CLAUDE_CODE_MAX_RETRIES: '0',
        HOME: claudeHome,
      },
    };
    mkdirSync(join(userDataDir, 'Machine'), { recursive: true });
    writeFileSync(join(userDataDir, 'Machine', 'settings.json'), `${JSON.stringify(remote, null, 2)}\n`);
    return remote;
  },
  // The conversation delegates to Claude Code; Claude's own requests (Anthropic Messages) get a
  // reply streamed for minutes, so only the interrupt ends it.
  model: (model) =>
    model.setFallback((body, i) => {
      if (model.requests[i]?.wire === 'messages') return { text: SLOW_TEXT, chunkSize: 6, chunkDelayMs: 120 };
      const last = body.messages.at(-1);
      if (last?.role === 'tool') return { text: 'Claude Code was stopped before it finished; I will answer myself.' };
      if (last?.role === 'user' && String(last.content ?? '').includes(ROOT))
        return { toolCalls: [{ name: 'delegate_claude_code', arguments: { prompt: 'Explain process groups in a few paragraphs.', label: LABEL } }] };
      return { text: 'ok' };
    }),
  async run({ panel, chat, row, rowWith, send, contextMenu, openPanel, selectRow, step, until, visible, sleep, say }) {
    const live = chat.locator('article.live');
    const liveText = () => live.evaluate((el) => [...el.querySelectorAll('.md')].map((m) => m.textContent ?? '').join(''));
    let groups = new Map();

    await step('open-panel', 120_000, async () => {
      await openPanel();
      await until('the panel to be ready (snapshot received)', 60_000, async () =>
        (await panel.locator('.tree-body').textContent({ timeout: slack(2_000) }))?.includes('No conversations yet'),
      );
    });

    await step('remote-child-with-badge', 120_000, async () => {
      await send(ROOT);
      await visible(rowWith(LABEL, 'running'), `'${LABEL}' running in the tree`, 60_000);
      const badge = row(LABEL).first().locator('.meta.remote');
      await until(
        'the program/version badge on the node',
        60_000,
        async () => (await badge.textContent({ timeout: slack(2_000) }))?.trim() === `claude-code ${PINNED}`,
      );
      const title = (await badge.getAttribute('title', { timeout: slack(2_000) })) ?? '';
      say(`  badge: ${JSON.stringify(await badge.textContent())} (hover: ${JSON.stringify(title)})`);
      if (!title.includes('claude-code')) throw new Error(`the badge's hover does not name the program: ${JSON.stringify(title)}`);
      groups = await until('the claude process to run', 30_000, async () => {
        const g = claudeProcesses();
        return g.size > 0 ? g : undefined;
      });
      say(`  claude processes: ${[...groups].map(([pid, pgid]) => `${pid} (group ${pgid})`).join(', ')}`);
    });

    await step('it-streams', 90_000, async () => {
      await selectRow(LABEL);
      await visible(live, "the remote child's live reply", 45_000);
      const first = await until('streamed text in the live reply', 45_000, async () => {
        const t = await liveText();
        return t.length > 0 ? t : undefined;
      });
      await sleep(2_000);
      const later = await liveText();
      say(`  live reply: ${first.length} then ${later.length} characters`);
      if (!(later.length > first.length)) throw new Error('the live reply did not grow: the remote child is not streaming');
      if (!SLOW_TEXT.startsWith(later.replace(/\s+/g, ' ').trim().slice(0, 40)))
        throw new Error(`the live reply is not Claude's text: ${JSON.stringify(later.slice(0, 80))}`);
    });

    await step('interrupt-from-the-tree', 60_000, async () => {
      await contextMenu(row(LABEL).first(), 'Interrupt Agent');
      await visible(rowWith(LABEL, 'interrupted'), `'${LABEL}' interrupted`, 30_000);
      const pgids = [...new Set(groups.values())];
      await until('every process group of the program to be gone', 15_000, async () => pgids.every((g) => !groupAlive(g)) && claudeProcesses().size === 0);
      say(`  groups ${pgids.join(', ')} gone; no process with the flow's Claude config dir left`);
    });
  },
};
