// A scripted host for the real webview bundle, for tests, benches and screenshots. Not
// part of the extension: it is built by vite.harness.config.ts into dist/webview-harness/.
//
// It stands in for VS Code: defines acquireVsCodeApi() (posted messages land on
// window.__posted, view state in sessionStorage so a reload is a hide-and-show), sets the
// theme variables, then loads the built dist/webview/index.{js,css} unchanged.
//
// Query parameters: view=panel|transcript, session=ID, theme=dark|light|hc,
// bundle=URL of the folder holding index.js (default ../webview/), demo=1 plays a scene.
import './themes.css';
import type { HostToWebview, WebviewToHost } from '../../src/protocol';
import { demoRespond, demoScene } from './scene';

interface HarnessHost {
  /** Delivers a host message the way VS Code does: a `message` event on window. */
  send(msg: HostToWebview): void;
  /** Resolves after the next frame has been rendered (rAF, then a task after paint). */
  frame(): Promise<void>;
  /** Plays the demo scene (a small tree, a chat with a report, a settlement, a tool call, an approval). */
  demo(): void;
  /** Forgets the saved view state. */
  clearState(): void;
}

declare global {
  interface Window {
    __posted: WebviewToHost[];
    __host: HarnessHost;
    /** Content-Security-Policy violations seen on the page. */
    __csp: string[];
    /** Uncaught errors. */
    __errors: string[];
    acquireVsCodeApi: () => { postMessage(m: unknown): void; getState(): unknown; setState(s: unknown): void };
  }
}

const params = new URLSearchParams(location.search);
const view = params.get('view') === 'transcript' ? 'transcript' : 'panel';
const session = params.get('session') ?? undefined;
const theme = (['dark', 'light', 'hc'] as const).find((t) => t === params.get('theme')) ?? 'dark';
const bundle = params.get('bundle') ?? '../webview/';
const stateKey = `arbor-harness-state:${view}:${session ?? ''}`;
const demo = params.get('demo') === '1';

document.documentElement.dataset.theme = theme;
document.documentElement.dataset.view = view;
document.body.classList.add(theme === 'hc' ? 'vscode-high-contrast' : `vscode-${theme}`);
const app = document.getElementById('app')!;
for (const el of [document.body, app]) {
  el.dataset.view = view;
  if (session) el.dataset.session = session;
}

window.__posted = [];
window.__csp = [];
window.__errors = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__csp.push(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'} ${e.sample ?? ''}`.trim());
});
window.addEventListener('error', (e) => window.__errors.push(String(e.message)));
window.addEventListener('unhandledrejection', (e) => window.__errors.push(String(e.reason)));

let acquired = false;
window.acquireVsCodeApi = () => {
  // VS Code throws on a second call; so do we, to catch a second caller.
  if (acquired) throw new Error('acquireVsCodeApi() may be called only once');
  acquired = true;
  return {
    postMessage(m: unknown) {
      // VS Code serialises messages; a value that does not survive JSON is a bug.
      const msg = JSON.parse(JSON.stringify(m)) as WebviewToHost;
      window.__posted.push(msg);
      // In demo mode a tiny host answers, asynchronously like the real one.
      if (demo)
        setTimeout(() => {
          for (const r of demoRespond(msg, Date.now())) window.__host.send(r);
        }, 0);
    },
    getState() {
      const s = sessionStorage.getItem(stateKey);
      return s === null ? undefined : JSON.parse(s);
    },
    setState(s: unknown) {
      sessionStorage.setItem(stateKey, JSON.stringify(s));
    },
  };
};

window.__host = {
  send(msg) {
    window.dispatchEvent(new MessageEvent('message', { data: msg }));
  },
  frame() {
    return new Promise((resolve) =>
      requestAnimationFrame(() => {
        const ch = new MessageChannel();
        ch.port1.onmessage = () => resolve();
        ch.port2.postMessage(0);
      }),
    );
  },
  demo() {
    for (const m of demoScene(Date.now())) window.__host.send(m);
  },
  clearState() {
    sessionStorage.removeItem(stateKey);
  },
};

// The bundle under test, loaded as the extension's HTML loads it.
const css = document.createElement('link');
css.rel = 'stylesheet';
css.href = new URL('index.css', new URL(bundle, location.href)).href;
document.head.append(css);
const script = document.createElement('script');
script.type = 'module';
script.src = new URL('index.js', new URL(bundle, location.href)).href;
if (demo) {
  // Answer `webview/ready` with the scene, as a host answers with its snapshot.
  const timer = setInterval(() => {
    if (!window.__posted.some((m) => m.type === 'webview/ready')) return;
    clearInterval(timer);
    window.__host.demo();
  }, 10);
}
document.body.append(script);
