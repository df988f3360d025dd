// A child in its own git worktree (issue 24 part 2, decision 0060), in real VS Code:
//   01 the sample workspace made a git repository; asked to, the conversation starts a child with
//      isolation "worktree" that writes src/farewell.js: the tree shows it with its worktree badge,
//      and the workspace itself still has no such file
//   02 on the settled child, the worktree bar offers Review changes, Apply, Discard, Keep branch;
//      Review changes opens VS Code's diff editor on the child's file
//   03 Apply brings the change into the workspace's files (not committed): the file is there, the
//      bar says applied
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { repoRoot } from '../../../scripts/e2e/paths.mjs';

const require = createRequire(import.meta.url);
const { demoReply } = require(join(repoRoot, 'out', 'test', 'support', 'demo-script.js'));

const ASK = 'WT-PARENT: add a farewell helper, in a worktree';
const FAREWELL = "export const farewell = (name) => 'Goodbye, ' + name + '!';\n";
const text = (m) => String(m?.content ?? '');

/** The parent delegates to a worktree child; the child writes one file; anything else is the demo's. */
function reply(body) {
  const last = body.messages.at(-1);
  const child = body.messages.some((m) => m.role === 'user' && text(m).includes('WT-CHILD'));
  if (child) {
    if (last.role === 'tool') return { text: 'Wrote src/farewell.js in my worktree.' };
    return { toolCalls: [{ name: 'write_file', arguments: { path: 'src/farewell.js', content: FAREWELL } }] };
  }
  if (body.messages.some((m) => m.role === 'user' && text(m).includes('WT-PARENT'))) {
    if (last.role === 'tool') return { text: 'The helper is ready in its worktree: review it, then apply.' };
    return {
      toolCalls: [
        { name: 'subagent', arguments: { prompt: 'WT-CHILD: write src/farewell.js with a farewell(name) helper.', label: 'wt-edit', isolation: 'worktree' } },
      ],
    };
  }
  return demoReply(body);
}

function git(folder, ...args) {
  execFileSync('git', args, {
    cwd: folder,
    env: { ...process.env, GIT_AUTHOR_NAME: 'flow', GIT_AUTHOR_EMAIL: 'flow@localhost', GIT_COMMITTER_NAME: 'flow', GIT_COMMITTER_EMAIL: 'flow@localhost' },
    stdio: 'ignore',
  });
}

export const flow = {
  name: 'worktree',
  model: (model) => model.setFallback(reply),
  async run({ page, chat, row, rowWith, send, openPanel, step, until, visible, folder }) {
    const bar = chat.locator('.worktree-bar');
    const target = join(folder, 'src', 'farewell.js');

    await step('a-child-works-in-its-own-worktree', 90_000, async () => {
      git(folder, 'init', '-q', '-b', 'main');
      git(folder, 'add', '-A');
      git(folder, 'commit', '-qm', 'sample');
      await openPanel();
      await send(ASK);
      await visible(rowWith('wt-edit', 'settled'), "the worktree child 'wt-edit', settled", 40_000);
      await visible(row('wt-edit').locator('.worktree'), "the child's worktree badge", 10_000);
      if (existsSync(target)) throw new Error('the child wrote the workspace itself, not its worktree');
    });

    await step('review-opens-the-diff-editor', 60_000, async () => {
      await row('wt-edit').click();
      await visible(bar.locator('.branch', { hasText: /^arbor\/wt-edit-/ }), "the worktree bar with the child's branch", 15_000);
      for (const b of ['Review changes', 'Apply', 'Discard', 'Keep branch']) await visible(bar.locator('button', { hasText: b }), `the ${b} button`, 5_000);
      await bar.locator('button.review').click();
      await visible(page.locator('.multiDiffEditor, .monaco-diff-editor').first(), "VS Code's diff editor", 20_000);
      await visible(page.locator('.tab', { hasText: 'changes in its worktree' }).first(), "the diff editor's tab", 10_000);
      await visible(page.locator('.monaco-editor .view-line', { hasText: 'Goodbye' }).first(), "the child's new line in the diff", 15_000);
    });

    await step('apply-brings-the-change-into-the-workspace', 45_000, async () => {
      await bar.locator('button.apply').click();
      await until('src/farewell.js in the workspace', 20_000, async () => existsSync(target) && readFileSync(target, 'utf8') === FAREWELL);
      await visible(bar.locator('.state', { hasText: 'applied to the workspace' }), 'the bar saying applied', 15_000);
    });
  },
};
