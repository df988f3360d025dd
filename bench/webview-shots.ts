// Screenshots of the webview in the scripted-host harness, for looking at the UI without
// VS Code: `npx tsc -p . && node out/bench/webview-shots.js [outDir]` (default
// test-artifacts/webview-shots). Builds the bundle fresh, plays the demo scene
// (webview/dev/scene.ts) in dark, light and high-contrast themes, and a few states.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildWebview, openBrowser, openHarness, type Page, repoRoot, serve } from '../test/support/webview-page';
import { cleanupTemps, tempDir } from './support';

async function settle(page: Page): Promise<void> {
  await page.evaluate(`window.__host.frame().then(() => window.__host.frame())`);
}

async function main(): Promise<void> {
  const out = path.resolve(process.argv[2] ?? path.join(repoRoot(), 'test-artifacts', 'webview-shots'));
  fs.mkdirSync(out, { recursive: true });
  const session = await openBrowser();
  if (typeof session === 'string') throw new Error(session);
  const dir = tempDir('arbor-webview-shots-');
  await buildWebview(dir);
  const server = await serve(dir);
  const shots: string[] = [];
  const shoot = async (page: Page, name: string) => {
    await settle(page);
    const file = path.join(out, `${name}.png`);
    await page.screenshot({ path: file });
    shots.push(file);
    const health = await page.evaluate<string[]>(`[...window.__csp, ...window.__errors]`);
    if (health.length > 0) console.log(`${name}: ${health.join('; ')}`);
  };
  try {
    for (const theme of ['dark', 'light', 'hc']) {
      const page = await openHarness(session, server.url, { view: 'panel', theme, demo: '1' }, { width: 460, height: 1180 });
      await shoot(page, `panel-${theme}`);
      // Scrolled up to the child's report and the runtime's settlement notice.
      await page.evaluate(`document.querySelector('article.report').scrollIntoView({ block: 'start' })`);
      await shoot(page, `panel-${theme}-report`);
      await page.close();
    }

    // Everything at once: the fourteen-node tree sized to fit, then the chat with a tool call,
    // a report, a settlement notice, an interrupted turn, live text and an approval.
    const all = await openHarness(session, server.url, { view: 'panel', theme: 'dark', demo: '1' }, { width: 460, height: 1800 });
    await settle(all);
    await all.focus('[role=separator]');
    await all.keyboard.press('Home');
    for (let i = 0; i < 26; i++) await all.keyboard.press('ArrowDown');
    await all.evaluate(`document.activeElement.blur()`);
    await all.evaluate(`document.querySelectorAll('article')[0].scrollIntoView({ block: 'start' })`);
    await shoot(all, 'panel-dark-all');
    await all.close();

    // Keyboard focus on the tree, a tool call opened, a request error under the input.
    const page = await openHarness(session, server.url, { view: 'panel', theme: 'dark', demo: '1' }, { width: 460, height: 1180 });
    await settle(page);
    await page.evaluate(`(() => {
      const row = document.querySelector('[role=treeitem][tabindex="0"]');
      row.focus();
      row.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowDown', bubbles: true }));
      const tools = document.querySelectorAll('details.tool > summary');
      tools[tools.length - 1].click();
      window.__host.send({ type: 'request/done', id: 'x1', ok: false, error: 'Session s-m3k9x2a1-7f3c9e21 is not running.' });
    })()`);
    await shoot(page, 'panel-dark-focus-error');
    await page.close();

    // A subagent's own log (selected by clicking its row): delegation notice, task, report call, compaction.
    const child = await openHarness(session, server.url, { view: 'panel', theme: 'dark', demo: '1' }, { width: 460, height: 1000 });
    await settle(child);
    await child.evaluate(`document.querySelector('[data-row-id="s-m3k9x2a1-7f3c9e21.c7b2f0"]').click()`);
    await settle(child);
    await child.evaluate(`document.querySelectorAll('.msg details > summary')[0]?.click()`);
    await shoot(child, 'panel-dark-child');
    await child.close();

    // Restricted Mode and no API key.
    const restricted = await openHarness(session, server.url, { view: 'panel', theme: 'dark', demo: '1' }, { width: 460, height: 700 });
    await settle(restricted);
    await restricted.evaluate(
      `window.__host.send({ type: 'settings/changed', settings: { sandbox: 'read-only', approval: 'ask', restricted: true, hasApiKey: false, modelSource: 'none', model: 'deepseek-chat' } })`,
    );
    await shoot(restricted, 'panel-dark-restricted');
    await restricted.evaluate(
      `window.__host.send({ type: 'settings/changed', settings: { sandbox: 'read-only', approval: 'ask', restricted: false, hasApiKey: false, modelSource: 'none', model: 'deepseek-chat' } })`,
    );
    await shoot(restricted, 'panel-dark-no-key');
    await restricted.close();

    // A transcript editor tab.
    const tab = await openHarness(
      session,
      server.url,
      { view: 'transcript', session: 's-m3k9x2a1-7f3c9e21', theme: 'dark', demo: '1' },
      { width: 1000, height: 1000 },
    );
    await shoot(tab, 'transcript-dark');
    await tab.close();
  } finally {
    await server.close();
    await session.browser.close();
    cleanupTemps();
  }
  for (const s of shots) console.log(s);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
