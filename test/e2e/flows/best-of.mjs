// Best of N (issue 24 part 3, decision 0061), in real VS Code:
//   01 the sample workspace made a git repository; the human asks something, the conversation answers
//   02 "Try N ways…" on the human's message: the host asks how many (2) and how (the same model);
//      two ways appear in the tree, each re-running the message in its own worktree, and once both
//      settle the chat shows them side by side, each with its answer and src/greet.js changed (+/−)
//   03 "Apply this one" on way 1: the workspace's src/greet.js has way 1's content (not way 2's);
//      the comparison marks it applied and offers to discard the other, which Discard the others does
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { repoRoot } from '../../../scripts/e2e/paths.mjs';

const require = createRequire(import.meta.url);
const { demoReply } = require(join(repoRoot, 'out', 'test', 'support', 'demo-script.js'));

const ASK = 'BEST-OF: make greet handle an empty name';
const VARIANTS = [
  `function greet(name) {\n  return name ? \`Hello, \${name}!\` : 'Hello, stranger!';\n}\n\nmodule.exports = { greet };\n`,
  `function greet(name) {\n  return \`Hello, \${name || 'world'}!\`;\n}\n\nmodule.exports = { greet };\n`,
];
const text = (m) => String(m?.content ?? '');

/**
 * The conversation's own first request answers; each later request of the same message (a way
 * re-running it, in the order they ask) writes src/greet.js its own way, then says so.
 */
function scripted() {
  let asked = 0;
  const variantOf = new Map();
  return (body, index) => {
    const last = body.messages.at(-1);
    if (!body.messages.some((m) => m.role === 'user' && text(m).startsWith('BEST-OF'))) return demoReply(body);
    // The write's call id names the request that made it: the answer says which variant it wrote.
    if (last.role === 'tool') return { text: `Done: variant ${variantOf.get(Number(/^call_(\d+)_/.exec(last.tool_call_id ?? '')?.[1]))}.` };
    const n = asked++;
    if (n === 0) return { text: 'One way to do it: check the name first. Try several ways to compare.' };
    variantOf.set(index, (n - 1) % 2);
    return { toolCalls: [{ name: 'write_file', arguments: { path: 'src/greet.js', content: VARIANTS[(n - 1) % 2] } }] };
  };
}

function git(folder, ...args) {
  execFileSync('git', args, {
    cwd: folder,
    env: { ...process.env, GIT_AUTHOR_NAME: 'flow', GIT_AUTHOR_EMAIL: 'flow@localhost', GIT_COMMITTER_NAME: 'flow', GIT_COMMITTER_EMAIL: 'flow@localhost' },
    stdio: 'ignore',
  });
}

export const flow = {
  name: 'best-of',
  model: (model) => model.setFallback(scripted()),
  async run({ chat, rowIds, send, openPanel, pick, step, until, visible, folder }) {
    const ways = chat.locator('section.ways');
    const target = join(folder, 'src', 'greet.js');
    const original = readFileSync(target, 'utf8');
    let before;

    await step('the-conversation-answers', 60_000, async () => {
      git(folder, 'init', '-q', '-b', 'main');
      git(folder, 'add', '-A');
      git(folder, 'commit', '-qm', 'sample');
      await openPanel();
      await send(ASK);
      await visible(chat.locator('article.msg.assistant', { hasText: 'One way to do it' }), "the conversation's answer", 30_000);
      before = new Set(await rowIds());
    });

    await step('try-two-ways-and-compare', 120_000, async () => {
      const msg = chat.locator('article.msg.user', { hasText: ASK });
      await msg.hover();
      await msg.locator('button.ways').click();
      await pick('2 ways');
      await pick(/^The same for every way/);
      await until('two new nodes in the tree', 20_000, async () => (await rowIds()).filter((id) => !before.has(id)).length === 2);
      await visible(ways.locator('article.way[data-way="2"]'), 'the comparison of the ways', 20_000);
      await visible(chat.locator('section.ways[data-settled="true"]'), 'both ways settled', 60_000);
      for (const n of [1, 2]) {
        const way = ways.locator(`article.way[data-way="${n}"]`);
        await visible(way.locator('.files li', { hasText: 'src/greet.js' }), `way ${n}'s changed file`, 10_000);
        await visible(way.locator('.outcome', { hasText: 'Done:' }), `way ${n}'s answer`, 10_000);
        await visible(way.locator('button.apply', { hasText: 'Apply this one' }), `way ${n}'s Apply this one`, 5_000);
      }
      if (readFileSync(target, 'utf8') !== original) throw new Error('a way wrote the workspace itself, not its worktree');
    });

    await step('apply-one-then-discard-the-other', 60_000, async () => {
      const first = ways.locator('article.way[data-way="1"]');
      const said = (await first.locator('.outcome').textContent()) ?? '';
      const variant = Number(/variant (\d)/.exec(said)?.[1]);
      if (!(variant in VARIANTS)) throw new Error(`way 1's answer names no variant: ${JSON.stringify(said)}`);
      await first.locator('button.apply').click();
      await until("src/greet.js in the workspace to hold way 1's content", 20_000, async () => readFileSync(target, 'utf8') === VARIANTS[variant]);
      await visible(ways.locator('article.way[data-chosen="true"][data-way="1"]'), 'way 1 marked chosen', 10_000);
      await visible(ways.locator('button.discard-others'), 'Discard the others', 10_000);
      await ways.locator('button.discard-others').click();
      await visible(ways.locator('article.way[data-way="2"] .status', { hasText: 'discarded' }), 'way 2 discarded', 15_000);
    });
  },
};
