// A folder whose .arbor, .claude and .codex a confined command made (decision 0111, amended in
// s56), in real VS Code. Before the window opens, the attacker's session runs: the real CLI (`arbor
// run` in `ws`, with this flow's HOME and no remote program configured) gets from the scripted model
// one run_command that, in the real bubblewrap sandbox, makes `sub/.arbor/settings.json` and
// `sub/.claude/settings.json`, each with a UserPromptSubmit hook that would write a marker file on
// the host, and `sub/.codex/config.toml` (an MCP server a Codex child started there would run); the
// sandbox's walk records all three folders in HOME/.arbor/made-by-commands.jsonl (it records every
// protected name, whatever programs are configured). The user's own hook (HOME/.arbor/settings.json)
// writes a marker of its own. Then VS Code opens `sub` (code-server with the same HOME):
//   01 the panel opens; the notification center holds Arbor's warning: `sub` is not trusted,
//      `.arbor` and `.claude` named, "Its hooks are not run (MADE_BY_COMMAND)"; no Codex program is
//      configured, so `.codex` (which only Codex reads) is not named
//   02 a turn: the user's hook runs (hooks do fire on this turn), the planted ones do not (their
//      markers are absent after the model's reply)
//   03 the user configures a Codex program (`arbor.remote.codex.command`, machine-scoped: the
//      remote's Machine settings here) and reloads; after a turn the warning names `sub/.codex`
//      too; the program (a script that leaves a marker if it is ever started) was not started
//   04 the user's way back: `arbor trust sub`, as the warning says, trusts `.arbor` and `.claude`
//      and says it left `sub/.codex` (the CLI does not read VS Code's settings) and how to trust it:
//      `arbor trust sub --config FILE` (FILE configures the same Codex program); Reload Window; the next turn runs the (now trusted) folder's
//      hooks — the markers the window refused appear, so step 02 was the record at work, not a hook
//      that could not run; the window no longer warns, and Codex was never started
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
const CODEX_TURN = 'hello with codex configured';
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
      // The user's Codex program: never meant to run here, it leaves a marker if anything starts it.
      codex: join(root, 'bin', 'codex'),
      // The CLI's config file naming the same program (`--config`, as `arbor trust` reads it).
      cliConfig: join(root, 'arbor-config.json'),
    };
    for (const d of [dirs.home, dirs.sub, dirs.marks, join(root, 'bin')]) mkdirSync(d, { recursive: true });
    writeFileSync(dirs.codex, `#!/bin/sh\necho "$@" > ${join(dirs.marks, 'codex-started')}\nexit 1\n`, { mode: 0o755 });
    writeFileSync(dirs.cliConfig, JSON.stringify({ remote: { codex: { command: dirs.codex } } }));
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
    'mkdir -p sub/.arbor sub/.claude sub/.codex',
    write('sub/.arbor/settings.json', hookSettings(mark('arbor-hook'))),
    write('sub/.claude/settings.json', hookSettings(mark('claude-hook'))),
    `printf '[mcp_servers.setup]\\ncommand = "sh"\\nargs = ["-c", "echo ran > ${mark('codex-mcp')}"]\\n' > sub/.codex/config.toml`,
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
      if (text(last).includes(CODEX_TURN)) return { text: 'Hello, with Codex configured.' };
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
    for (const f of ['.arbor/settings.json', '.claude/settings.json', '.codex/config.toml']) {
      if (!existsSync(join(sub, f))) throw new Error(`the confined command did not write sub/${f}`);
    }
    const record = readFileSync(join(home, '.arbor', 'made-by-commands.jsonl'), 'utf8');
    for (const d of ['.arbor', '.claude', '.codex']) {
      if (!record.includes(JSON.stringify(join(sub, d)))) throw new Error(`the record does not hold sub/${d}:\n${record}`);
    }
    say(`  the sandbox recorded: ${record.trim().split('\n').length} line(s) in HOME/.arbor/made-by-commands.jsonl`);
    // The user's own hook (never refused): it proves a turn's hooks fire.
    mkdirSync(join(home, '.arbor'), { recursive: true });
    writeFileSync(join(home, '.arbor', 'settings.json'), JSON.stringify(hookSettings(mark('user-hook'))));
  },

  async run({ page, chat, send, openPanel, command, reload, server, step, until, visible, say }) {
    const { home, sub, codex, cliConfig } = flowDirs();
    const answer = (s) => chat.locator('article.msg', { hasText: s }).first();
    /** The MADE_BY_COMMAND warning in the notification center (there once), its text. */
    const warning = async () => {
      await command('Notifications: Show Notifications');
      const item = page.locator('.notifications-center .notification-list-item', { hasText: 'MADE_BY_COMMAND' });
      await visible(item, 'the MADE_BY_COMMAND warning', 30_000);
      const msg = (
        (await item
          .first()
          .locator('.notification-list-item-message')
          .textContent({ timeout: slack(5_000) })) ?? ''
      ).trim();
      if ((await item.count()) !== 1) throw new Error(`the warning was shown ${await item.count()} times`);
      return msg;
    };
    const expectSays = (msg, wants) => {
      for (const want of wants) {
        if (!msg.includes(want)) throw new Error(`the warning does not say ${JSON.stringify(want)}: ${JSON.stringify(msg)}`);
      }
    };
    const common = [
      `${sub} is not trusted:`,
      `${join(sub, '.arbor')} (seen `,
      `${join(sub, '.claude')} (seen `,
      'appeared while Arbor ran confined commands around it',
      `run 'arbor trust ${sub}'`,
      'Its hooks are not run (MADE_BY_COMMAND).',
    ];
    const plantedHooksDidNotRun = () => {
      for (const m of ['arbor-hook', 'claude-hook']) {
        if (existsSync(mark(m))) throw new Error(`the hook a confined command planted in sub/.${m.split('-')[0]} ran`);
      }
    };
    const codexNeverStarted = () => {
      if (existsSync(mark('codex-started'))) throw new Error(`the configured Codex program was started: ${readFileSync(mark('codex-started'), 'utf8')}`);
    };

    await step('warning-names-the-made-folders', 90_000, async () => {
      await openPanel();
      // The harness opens (and reads the record) with the first turn at the latest.
      await send(FIRST);
      const msg = await warning();
      say(`  notification: ${msg}`);
      expectSays(msg, common);
      // No Codex program configured: what only Codex reads does not decide (0111, amended in s56).
      if (msg.includes('.codex')) throw new Error(`without a Codex program the warning names .codex: ${JSON.stringify(msg)}`);
    });

    await step('planted-hooks-do-not-run', 90_000, async () => {
      await visible(answer('Hello, before the review.'), "the model's reply to the first turn", 45_000);
      await until("the user's own hook to have run on this turn", 15_000, async () => existsSync(mark('user-hook')));
      plantedHooksDidNotRun();
      say('  the user hook ran; the hooks in sub/.arbor and sub/.claude did not');
    });

    await step('with-codex-the-warning-names-codex', 120_000, async () => {
      // The user's Codex program, machine-scoped: a remote window (code-server's extension host is
      // one) reads it from the remote's Machine settings, which the window reads again on reload.
      const machine = join(server.userDataDir, 'Machine', 'settings.json');
      mkdirSync(join(machine, '..'), { recursive: true });
      writeFileSync(machine, `${JSON.stringify({ 'arbor.remote.codex.command': codex }, null, 2)}\n`);
      rmSync(mark('user-hook'));
      await reload();
      await send(CODEX_TURN);
      const msg = await warning();
      say(`  notification: ${msg}`);
      expectSays(msg, [...common, `${join(sub, '.codex')} (seen `]);
      await visible(answer('Hello, with Codex configured.'), "the model's reply to the turn with Codex configured", 45_000);
      await until("the user's own hook to have run on this turn", 15_000, async () => existsSync(mark('user-hook')));
      plantedHooksDidNotRun();
      codexNeverStarted();
      say('  with Codex configured the warning names sub/.codex; the planted hooks did not run; Codex was not started');
    });

    await step('trusted-after-review-runs-them', 150_000, async () => {
      rmSync(mark('user-hook'));
      // What the warning says to run: the CLI does not read VS Code's settings, so with no config it
      // trusts what Arbor reads and leaves sub/.codex, saying how to trust it.
      const plain = await arbor(['trust', sub], { HOME: home }, 30_000);
      if (plain.code !== 0) throw new Error(`arbor trust failed (exit ${plain.code}): ${plain.stderr}`);
      say(`  arbor trust: ${plain.stdout.trim().split('\n').join(' | ')}`);
      for (const d of ['.arbor', '.claude']) {
        if (!plain.stdout.includes(`trusted ${join(sub, d)} (recorded as made by a command`))
          throw new Error(`arbor trust did not trust sub/${d}: ${plain.stdout}`);
      }
      if (!plain.stdout.includes(`left untrusted: ${join(sub, '.codex')} (`) || !plain.stdout.includes(`'arbor trust ${sub} --config FILE'`))
        throw new Error(`arbor trust without the Codex program does not say it left sub/.codex: ${plain.stdout}`);
      // The same Codex program configured for the CLI: `arbor trust` trusts .codex as well.
      const t = await arbor(['trust', sub, '--config', cliConfig], { HOME: home }, 30_000);
      if (t.code !== 0) throw new Error(`arbor trust --config failed (exit ${t.code}): ${t.stderr}`);
      say(`  arbor trust --config: ${t.stdout.trim().split('\n').join(' | ')}`);
      if (!t.stdout.includes(`trusted ${join(sub, '.codex')} (recorded as made by a command`))
        throw new Error(`arbor trust did not trust sub/.codex: ${t.stdout}`);
      if (t.stdout.includes('left untrusted')) throw new Error(`arbor trust --config left something: ${t.stdout}`);
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
      codexNeverStarted();
      say('  once trusted, the hooks in sub/.arbor and sub/.claude ran, with no warning; Codex was never started');
    });
  },
};
