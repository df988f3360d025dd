import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { openBrowser } from '../support/webview-page';

/** The processes below `pid`, with their command lines. */
function descendants(pid: number): { pid: number; argv: string[] }[] {
  const children = new Map<number, number[]>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: { pid: number; argv: string[] }[] = [];
  const walk = (p: number): void => {
    for (const c of children.get(p) ?? []) {
      try {
        out.push({ pid: c, argv: fs.readFileSync(`/proc/${c}/cmdline`, 'utf8').split('\0').filter(Boolean) });
      } catch {
        // gone meanwhile
      }
      walk(c);
    }
  };
  walk(pid);
  return out;
}

describe('webview tier: the browser the bench and the tests drive', () => {
  it("runs chromium with playwright's disabled features and the address bar's popups off, in the one switch chromium reads (decision 0105)", async function () {
    this.timeout(120_000);
    const session = await openBrowser();
    if (typeof session === 'string') throw new Error(`needs Chromium and playwright-core: ${session}. Run "npm run setup:e2e" (npm test does).`);
    try {
      // The browser process: the one whose command line names playwright's pipe.
      const browser = descendants(process.pid).find((p) => p.argv.includes('--remote-debugging-pipe'));
      assert.ok(browser, 'the browser process is found below this one');
      const switches = browser.argv.filter((a) => a.startsWith('--disable-features='));
      assert.ok(switches.length >= 1, browser.argv.join(' '));
      // Chromium keeps the last one: it must hold both lists.
      const features = switches[switches.length - 1].slice('--disable-features='.length).split(',');
      for (const f of ['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup', 'WebUIOmniboxFullPopup']) assert.ok(features.includes(f), `${f} in ${features}`);
      assert.ok(features.includes('PaintHolding'), `playwright's own list kept: ${features}`);
      // And a page still renders.
      const page = await session.browser.newPage();
      assert.equal(await page.evaluate<number>('1 + 1'), 2);
      await page.close();
    } finally {
      await session.browser.close();
    }
  });
});
