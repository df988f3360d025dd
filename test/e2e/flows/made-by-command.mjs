// A folder whose .arbor and .claude a confined command made (decision 0111), in real VS Code.
// Before the window opens, the attacker's session runs: the real CLI (`arbor run` in `ws`, with
// this flow's HOME) gets from the scripted model one run_command that, in the real bubblewrap
// sandbox, makes `sub/.arbor/settings.json` and `sub/.claude/settings.json`, each with a
// UserPromptSubmit hook that would write a marker file on the host; the sandbox's walk records
// both folders in HOME/.arbor/made-by-commands.jsonl. The user's own hook (HOME/.arbor/settings.json)
// writes a marker of its own. Then VS Code opens `sub` (code-server with the same HOME):
//   01 the panel opens; the notification center holds Arbor's warning: `sub` is not trusted, both
//      folders named, "Its hooks are not run (MADE_BY_COMMAND)"
//   02 a turn: the user's hook runs (hooks do fire on this turn), the planted ones do not (their
//      markers are absent after the model's reply)
//   03 the user's way back: `arbor trust sub`, Reload Window; the next turn runs the (now
//      trusted) folder's hooks — the markers the window refused appear, so step 02 was the record
//      at work, not a hook that could not run; the window no longer warns
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../../scripts/e2e/paths.mjs';
import { slack } from '../lib/patience.mjs';

const require = createRequire(import.meta.url);
const { arbor } = require(join(repoRoot, 'out', 'test', 'support', 'cli.js'));

const PLANT = 'set up the sub package';
const FIRST = 'hello before the review';
const SECOND = 'hello after the review';
const text = (m) => (typeof m?.content === 'string' ? m.content : JSON.stringify(m?.content ?? ''));

// The flow's folders, made when it runs (every flow file is imported, whichever flows run), removed at exit.
let dirs;
function flowDirs() {
  if (!dirs) {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'arbor-ui-made-')));
    dirs = {
      root,
      home: join(root, 'home'),
      ws: join(root, 'ws'),
      sub: join(root, 'ws', 'sub'),
      marks: join(root, 'marks'),
    };
    for (const d of [dirs.home, dirs.sub, dirs.marks]) mkdirSync(d, { recursive: true });
    writeFileSync(join(dirs.sub, 'README.md'), '# sub\n\nA package the user made.\n');
    execFileSync('git', ['init', '-q', dirs.ws]);
    process.once('exit', () => rmSync(root, { recursive: true, force: true }));
  }
  return dirs;
}
const mark = (name) => join(flowDirs().marks, name);
const hookSettings = (marker) => ({ hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: `echo ran > ${marker}` }] }] } });

/** The attacker's command: a hook in each folder that decides what `sub` is trusted with. */
function plantCommand() {
  const write = (file, v) => `printf '%s' '${JSON.stringify(v)}' > ${file}`;
  return [
    'mkdir -p sub/.arbor sub/.claude',
    write('sub/.arbor/settings.json', hookSettings(mark('arbor-hook'))),
    write('sub/.claude/settings.json', hookSettings(mark('claude-hook'))),
    'echo planted',
  ].join(' && ');
}

export const flow = {
  name: 'made-by-command',
  timeoutMs: 300_000,
  get folder() {
    return flowDirs().sub;
  },
  get env() {
    return { HOME: flowDirs().home };
  },
  settings: { 'arbor.hooks.readClaudeSettings': true, 'git.openRepositoryInParentFolders': 'never' },
  model: (model) =>
    model.setFallback((body) => {
      const first = body.messages.find((m) => m.role === 'user');
      const last = body.messages.at(-1);
      if (text(first).includes(PLANT)) {
        if (last.role === 'tool') return { text: 'The sub package is set up.' };
        return { toolCalls: [{ name: 'run_command', arguments: { command: plantCommand() } }] };
      }
      if (text(last).includes(SECOND)) return { text: 'Hello again, after the review.' };
      if (text(last).includes(FIRST)) return { text: 'Hello, before the review.' };
      return { text: 'ok' };
    }),

  /** The attacker's session, with the real CLI and the real sandbox, before VS Code starts. */
  async prepare({ model, say }) {
    const { home, ws, sub, root } = flowDirs();
    const env = { HOME: home, ARBOR_USER_SETTINGS: join(root, 'no-user-hooks.json') };
    const r = await arbor(
      ['run', '--store', join(root, 'cli-store'), '--workspace', ws, '--base-url', model.baseURL, '--model', 'arbor-demo', '--json', PLANT],
      env,
      90_000,
    );
    if (r.code !== 0 || !/planted/.test(r.stdout)) throw new Error(`the planting run failed (exit ${r.code}): ${r.stderr.slice(-1500)}`);
    for (const f of ['.arbor/settings.json', '.claude/settings.json']) {
      if (!existsSync(join(sub, f))) throw new Error(`the confined command did not write sub/${f}`);
    }
    const record = readFileSync(join(home, '.arbor', 'made-by-commands.jsonl'), 'utf8');
    for (const d of ['.arbor', '.claude']) {
      if (!record.includes(JSON.stringify(join(sub, d)))) throw new Error(`the record does not hold sub/${d}:\n${record}`);
    }
    say(`  the sandbox recorded: ${record.trim().split('\n').length} line(s) in HOME/.arbor/made-by-commands.jsonl`);
    // The user's own hook (never refused): it proves a turn's hooks fire.
    mkdirSync(join(home, '.arbor'), { recursive: true });
    writeFileSync(join(home, '.arbor', 'settings.json'), JSON.stringify(hookSettings(mark('user-hook'))));
  },

  async run({ page, chat, send, openPanel, command, reload, step, until, visible, say }) {
    const { home, sub } = flowDirs();
    const answer = (s) => chat.locator('article.msg', { hasText: s }).first();

    await step('warning-names-the-made-folders', 90_000, async () => {
      await openPanel();
      // The harness opens (and reads the record) with the first turn at the latest.
      await send(FIRST);
      await command('Notifications: Show Notifications');
      const item = page.locator('.notifications-center .notification-list-item', { hasText: 'MADE_BY_COMMAND' });
      await visible(item, 'the MADE_BY_COMMAND warning', 30_000);
      const msg = (
        (await item
          .first()
          .locator('.notification-list-item-message')
          .textContent({ timeout: slack(5_000) })) ?? ''
      ).trim();
      say(`  notification: ${msg}`);
      for (const want of [
        `${sub} is not trusted:`,
        `${join(sub, '.arbor')} (seen `,
        `${join(sub, '.claude')} (seen `,
        'appeared while Arbor ran confined commands around it',
        `run 'arbor trust ${sub}'`,
        'Its hooks are not run (MADE_BY_COMMAND).',
      ]) {
        if (!msg.includes(want)) throw new Error(`the warning does not say ${JSON.stringify(want)}: ${JSON.stringify(msg)}`);
      }
      if ((await item.count()) !== 1) throw new Error(`the warning was shown ${await item.count()} times`);
    });

    await step('planted-hooks-do-not-run', 90_000, async () => {
      await visible(answer('Hello, before the review.'), "the model's reply to the first turn", 45_000);
      await until("the user's own hook to have run on this turn", 15_000, async () => existsSync(mark('user-hook')));
      for (const m of ['arbor-hook', 'claude-hook']) {
        if (existsSync(mark(m))) throw new Error(`the hook a confined command planted in sub/.${m.split('-')[0]} ran`);
      }
      say('  the user hook ran; the hooks in sub/.arbor and sub/.claude did not');
    });

    await step('trusted-after-review-runs-them', 150_000, async () => {
      rmSync(mark('user-hook'));
      const t = await arbor(['trust', sub], { HOME: home }, 30_000);
      if (t.code !== 0) throw new Error(`arbor trust failed (exit ${t.code}): ${t.stderr}`);
      say(`  ${t.stdout.trim().split('\n').join(' | ')}`);
      await reload();
      await send(SECOND);
      await visible(answer('Hello again, after the review.'), "the model's reply to the second turn", 45_000);
      await until("the user's hook to have run on the second turn", 15_000, async () => existsSync(mark('user-hook')));
      for (const m of ['arbor-hook', 'claude-hook']) {
        if (!existsSync(mark(m))) throw new Error(`the trusted folder's hook (${m}) did not run: the turn's hooks were not what step 02 refused`);
      }
      await command('Notifications: Show Notifications');
      await visible(page.locator('.notifications-center'), 'the notification center', 10_000);
      const warned = await page.locator('.notifications-center .notification-list-item', { hasText: 'MADE_BY_COMMAND' }).count();
      if (warned !== 0) throw new Error('the window still warns about the folder the user trusted');
      say('  once trusted, the hooks in sub/.arbor and sub/.claude ran, with no warning');
    });
  },
};
