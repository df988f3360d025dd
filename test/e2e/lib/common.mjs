// Names and small helpers every part of the UI-flow library shares (no workbench state here).
import { EXTENSION_ID, frameSelector } from './frames.mjs';

export { EXTENSION_ID };
export const RELEASE_DELAY_MS = 300;

export const SEL = {
  workbench: '.monaco-workbench .part.activitybar',
  activityIcon: '.activitybar a.action-label[aria-label^="Arbor"]',
  activityIconChecked: '.activitybar .action-item.checked a.action-label[aria-label^="Arbor"]',
  // Webviews are two frames deep: VS Code's host iframe, then #active-frame with our page.
  // The side panel is a webview *view*; a transcript tab is a webview *panel* (editor). The
  // host iframes are told apart by their content (frames.mjs marks them), never by their URL.
  panelFrame: frameSelector('panel'),
  tabFrame: frameSelector('transcript'),
  // VS Code's context menu is drawn in the main page (inside an open shadow root).
  menuItem: '.context-view .monaco-menu .action-item .action-label',
  editorTab: '.part.editor .tabs-container .tab',
  quickInput: '.quick-input-widget input',
  quickRow: '.quick-input-list .monaco-list-row',
};

const started = Date.now();
export const secs = (ms = Date.now() - started) => (ms / 1000).toFixed(1);
export const say = (msg) => console.log(`[ui-flows +${secs()} s] ${msg}`);
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export class FlowFailure extends Error {}
