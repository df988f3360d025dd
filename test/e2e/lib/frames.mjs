// Which of the workbench's webview frames is Arbor's side panel, and which a transcript tab,
// found by what the frames hold rather than by the host iframe's URL.
//
// A webview is two frames deep: VS Code's host iframe (in the page), then #active-frame with
// our page, whose <body data-view="panel|transcript"> says which view it is (webview-html.ts).
// The host iframe's URL is VS Code's business: after the view is hidden and shown again it no
// longer names the view's purpose, so a selector on `purpose=webviewView` misses the panel.
// Playwright cannot select an iframe by its content, so a watcher reads each #active-frame's
// data-view and marks its host iframe with `data-arbor-view`; the locators select on that mark
// and, like every locator, re-resolve on each try (a reloaded or re-created view is marked
// again as soon as its page has loaded).
export const EXTENSION_ID = 'arbor-dev.arbor';
export const FRAME_MARK = 'data-arbor-view';
/** Host iframes by the view their page holds. */
export const frameSelector = (view) => `iframe.webview[${FRAME_MARK}="${view}"]`;
/** Any host iframe of this extension, loaded or not (for progress reports). */
export const anyArborFrame = `iframe.webview[src*="extensionId=${EXTENSION_ID}"]`;

/**
 * Marks Arbor's webview host iframes in `page` by their content until stop() is called.
 * Checks every `everyMs`; only frames not seen before are read, and the page is touched only
 * when the set of marked frames changed.
 */
export function watchArborFrames(page, { everyMs = 250 } = {}) {
  const views = new WeakMap(); // inner Frame -> 'panel' | 'transcript'
  const ids = new WeakMap(); // host Frame -> number (to notice a change cheaply)
  let nextId = 1;
  let applied = '';
  let busy = false;
  let stopped = false;
  const forget = (frame) => views.delete(frame);
  page.on('framenavigated', forget);
  page.on('framedetached', forget);

  async function pass() {
    const marks = [];
    for (const frame of page.frames()) {
      // Our page is two frames deep. (Not by the inner frame's id: VS Code loads it as
      // #pending-frame and renames it #active-frame, and Playwright keeps the first name.)
      if (frame.isDetached()) continue;
      const host = frame.parentFrame();
      if (!host || host.parentFrame() !== page.mainFrame()) continue;
      let view = views.get(frame);
      if (!view) {
        view = await frame.evaluate(() => (document.getElementById('app') ? document.body?.dataset.view : undefined), undefined).catch(() => undefined);
        if (view !== 'panel' && view !== 'transcript') continue; // not loaded yet, or not ours
        views.set(frame, view);
      }
      if (!ids.has(host)) ids.set(host, nextId++);
      marks.push({ host, view });
    }
    const key = marks.map((m) => `${ids.get(m.host)}:${m.view}`).join(',');
    if (key === applied) return;
    const elements = [];
    for (const m of marks) {
      const el = await m.host.frameElement().catch(() => undefined);
      if (el) elements.push({ el, view: m.view });
    }
    await page.evaluate(
      ({ mark, elements }) => {
        const keep = new Set(elements.map((e) => e.el));
        for (const f of document.querySelectorAll(`iframe[${mark}]`)) if (!keep.has(f)) f.removeAttribute(mark);
        for (const { el, view } of elements) if (el.getAttribute(mark) !== view) el.setAttribute(mark, view);
      },
      { mark: FRAME_MARK, elements },
    );
    applied = key;
  }

  const timer = setInterval(() => {
    if (busy || stopped) return;
    busy = true;
    pass()
      .catch(() => {
        applied = ''; // the page reloaded under us: mark again next time
      })
      .finally(() => {
        busy = false;
      });
  }, everyMs);

  return {
    stop() {
      stopped = true;
      clearInterval(timer);
      page.off('framenavigated', forget);
      page.off('framedetached', forget);
    },
  };
}
