// The built webview in headless Chromium, driven through the scripted host
// (webview/dev/harness.ts): one fixture for every webview test file. It registers the mocha
// hooks (build and serve once, a page per test checked for CSP violations and page errors)
// and returns the helpers each test uses.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { HostToWebview, TreeNode, WebviewToHost } from '../../src/protocol';
import { type BrowserSession, buildWebview, openBrowser, openHarness, type Page, serve } from './webview-page';

export type { Page };

/** The panel settings a scripted host's snapshot carries, and a fixed time for entries. */
export const FIXTURE_SETTINGS = {
  sandbox: 'workspace-write',
  approval: 'ask',
  restricted: false,
  hasApiKey: true,
  modelSource: 'endpoint',
  model: 'deepseek-chat',
} as const;
export const FIXTURE_AT = '2025-06-01T09:00:00.000Z';

/** A user-started root node at rest, with what a test changes on top. */
export function rootNode(id: string, over: Partial<TreeNode> = {}): TreeNode {
  return restingNode(id, { tokens: { prompt: 1, completion: 1, cacheHit: 0 }, title: 'Root', ...over });
}

/** A node at rest that spent 1,100 tokens (no title unless given), with what a test sets on top. */
export function restingNode(id: string, extra: Partial<TreeNode> = {}): TreeNode {
  return {
    id,
    origin: 'user',
    depth: 0,
    status: 'idle',
    tokens: { prompt: 1000, completion: 100, cacheHit: 0 },
    reports: 0,
    createdAt: FIXTURE_AT,
    ...extra,
  };
}

export interface WebviewFixture {
  /** The page of the running test (opened by `open`). */
  readonly page: Page;
  /**
   * Open the harness page with these query parameters (theme dark unless given), closing the
   * test's previous page. `keepState`: keep what an earlier page saved (a reload).
   */
  open(query?: Record<string, string>, opts?: { viewport?: { width: number; height: number }; keepState?: boolean }): Promise<Page>;
  /** Deliver host messages in order, then wait a frame. */
  send(...msgs: HostToWebview[]): Promise<unknown>;
  posted(): Promise<WebviewToHost[]>;
  lastPosted(): Promise<WebviewToHost | undefined>;
  count(selector: string): Promise<number>;
  textOf(selector: string): Promise<string>;
  click(selector: string): Promise<unknown>;
  /** Poll an expression until true (waitForFunction would need eval, which the page's CSP forbids). */
  waitFor(expr: string, what: string, ms?: number): Promise<void>;
}

export function webviewFixture(prefix: string): WebviewFixture {
  let session: BrowserSession | undefined;
  let server: { url: string; close(): Promise<void> } | undefined;
  let page: Page | undefined;
  let dir: string | undefined;

  before(async function () {
    this.timeout(120_000);
    const s = await openBrowser();
    // Not a skip: without Chromium this tier proves nothing. `npm test` installs it first.
    if (typeof s === 'string') throw new Error(`The webview tests need Chromium and playwright-core: ${s}. Run "npm run setup:e2e" (npm test does).`);
    session = s;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    await buildWebview(dir);
    server = await serve(dir);
  });
  after(async () => {
    await server?.close();
    await session?.browser.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    if (!page) return;
    const health = await page.evaluate<string[]>(`[...window.__csp, ...window.__errors]`).catch(() => []);
    await page.close().catch(() => undefined);
    page = undefined;
    assert.deepEqual(health, [], 'no CSP violations or page errors');
  });

  const current = (): Page => {
    if (!page) throw new Error('no page: call open() first');
    return page;
  };
  const evaluate = <T>(js: string) => current().evaluate<T>(js);
  return {
    get page() {
      return current();
    },
    async open(query = { view: 'panel' }, opts = {}) {
      await page?.close().catch(() => undefined);
      page = await openHarness(session!, server!.url, { theme: 'dark', ...query }, opts.viewport);
      if (!opts.keepState) await page.evaluate(`window.__host.clearState()`);
      return page;
    },
    // Two frames: Svelte's update, then layout that depends on it (scroll positions, sizes).
    send: (...msgs) =>
      evaluate(`(async () => { for (const m of ${JSON.stringify(msgs)}) window.__host.send(m); await window.__host.frame(); await window.__host.frame(); })()`),
    posted: () => evaluate<WebviewToHost[]>(`window.__posted`),
    lastPosted: async () => (await evaluate<WebviewToHost[]>(`window.__posted`)).at(-1),
    count: (selector) => evaluate<number>(`document.querySelectorAll(${JSON.stringify(selector)}).length`),
    textOf: (selector) => evaluate<string>(`document.querySelector(${JSON.stringify(selector)})?.textContent ?? ''`),
    click: (selector) => evaluate(`document.querySelector(${JSON.stringify(selector)}).click()`),
    async waitFor(expr, what, ms = 5_000) {
      const end = Date.now() + ms;
      while (!(await evaluate<boolean>(expr))) {
        if (Date.now() > end) throw new Error(`${what} (not within ${ms} ms)`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}
