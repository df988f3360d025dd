// A workspace MCP server the user allowed, whose command then changes, is asked about again
// (decision 0112), in real VS Code. The workspace's .mcp.json names two servers (server-everything,
// stdio): "everything" and "steady".
//   01 both wait for the allow and are asked; Allow on each: both ready
//   02 .mcp.json changes what "everything" runs (a shell that leaves a marker file, then the same
//      server); "steady" stays as it was. The question for "everything" comes again, naming the new
//      command and saying "What it runs changed since you allowed it."; "steady" is not asked
//      again and stays ready
//   03 Not Now: the changed server does not start (no marker, still waiting), nor is it asked again
//   04 it changes once more (another marker): asked again, Allow: that command starts (its marker
//      appears, ready), so the absent marker of 03 was the decline at work; "steady" still unasked
// The asserts read what the user sees (the question's text, the panel's list, the markers), not how
// the change is detected.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../../scripts/e2e/paths.mjs';
import { slack } from '../lib/patience.mjs';

const EVERYTHING = join(repoRoot, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const CHANGED = 'What it runs changed since you allowed it.';

let marks;
function markDir() {
  if (!marks) {
    marks = mkdtempSync(join(tmpdir(), 'arbor-ui-mcp-marks-'));
    process.once('exit', () => rmSync(marks, { recursive: true, force: true }));
  }
  return marks;
}
const mark = (name) => join(markDir(), name);

const plain = { command: process.execPath, args: [EVERYTHING, 'stdio'] };
/** The same server behind a shell that first leaves `marker`: it exists only if this command line ran. */
const wrapped = (marker) => ({ command: '/bin/sh', args: ['-c', `echo started > ${marker} && exec ${process.execPath} ${EVERYTHING} stdio`] });

export const flow = {
  name: 'mcp-changed',
  timeoutMs: 300_000,
  async run({ page, panel, folder, openPanel, command, step, until, visible, sleep, say }) {
    const config = (everything) => writeFileSync(join(folder, '.mcp.json'), `${JSON.stringify({ mcpServers: { everything, steady: plain } }, null, 2)}\n`);
    const server = (name) => panel.locator(`[data-mcp-server="${name}"]`);
    const phase = (name) => server(name).getAttribute('data-phase', { timeout: slack(2_000) });
    const question = (name) => page.locator('.notifications-center .notification-list-item', { hasText: `defines the MCP server "${name}"` });
    const message = async (item) => ((await item.locator('.notification-list-item-message').textContent({ timeout: slack(5_000) })) ?? '').trim();
    /** The notification center, opened (again: a question that came later is listed there too). */
    const center = () => command('Notifications: Show Notifications');
    const answer = async (item, button) => {
      await item.locator('.monaco-button', { hasText: button }).click({ timeout: slack(5_000) });
      await until(`the question to close after ${button}`, 10_000, async () => (await item.count()) === 0);
    };
    const steadyUnasked = async () => {
      if ((await question('steady').count()) !== 0)
        throw new Error(`"steady" did not change and was asked about again: ${await message(question('steady').first())}`);
      const p = await phase('steady');
      if (p !== 'ready') throw new Error(`"steady" did not change and is ${p}`);
    };

    await step('allow-both', 120_000, async () => {
      config(plain);
      await openPanel();
      for (const name of ['everything', 'steady']) {
        await visible(server(name), `"${name}" in the panel list`, 30_000);
        await until(`"${name}" to wait for the allow`, 20_000, async () => (await phase(name)) === 'needs-allow');
      }
      await center();
      for (const name of ['everything', 'steady']) {
        await visible(question(name), `the question for "${name}"`, 20_000);
        const msg = await message(question(name));
        say(`  asked: ${msg}`);
        if (msg.includes(CHANGED)) throw new Error(`a first question says the server changed: ${msg}`);
        await answer(question(name), 'Allow');
      }
      for (const name of ['everything', 'steady']) await until(`"${name}" to be ready`, 45_000, async () => (await phase(name)) === 'ready');
    });

    await step('changed-is-asked-again', 90_000, async () => {
      config(wrapped(mark('declined')));
      await until('"everything" to wait for the allow again', 30_000, async () => (await phase('everything')) === 'needs-allow');
      await center();
      await visible(question('everything'), 'the question for the changed "everything"', 20_000);
      const msg = await message(question('everything'));
      say(`  asked again: ${msg}`);
      for (const want of [CHANGED, '/bin/sh -c', mark('declined')]) {
        if (!msg.includes(want)) throw new Error(`the question does not say ${JSON.stringify(want)}: ${JSON.stringify(msg)}`);
      }
      await steadyUnasked();
    });

    await step('declined-does-not-start', 60_000, async () => {
      await answer(question('everything'), 'Not Now');
      // Long enough for a start (the first one took well under this), bounded by the step.
      await sleep(5_000);
      if (existsSync(mark('declined'))) throw new Error('the changed command ran after Not Now');
      const p = await phase('everything');
      if (p !== 'needs-allow') throw new Error(`after Not Now "everything" is ${p}`);
      if ((await question('everything').count()) !== 0) throw new Error('the declined server was asked about again in the same window');
      await steadyUnasked();
    });

    await step('changed-again-allowed-starts', 90_000, async () => {
      config(wrapped(mark('allowed')));
      await center();
      await visible(question('everything'), 'the question for "everything" changed once more', 30_000);
      const msg = await message(question('everything'));
      if (!msg.includes(CHANGED) || !msg.includes(mark('allowed'))) throw new Error(`the question says ${JSON.stringify(msg)}`);
      await answer(question('everything'), 'Allow');
      await until('the allowed command to run (its marker)', 30_000, async () => existsSync(mark('allowed')));
      await until('"everything" to be ready', 45_000, async () => (await phase('everything')) === 'ready');
      if (existsSync(mark('declined'))) throw new Error('the declined command ran');
      await steadyUnasked();
      say('  the allowed change started; the declined one never ran; "steady" was never asked again');
    });
  },
};
