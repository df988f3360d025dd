// The webviews Arbor shows: the side panel and one transcript tab per session (restored after
// a window reload), each connected to the panel controller, which speaks to them.
import * as vscode from 'vscode';
import type { ApprovalNotifier } from './approval-notifier';
import type { PanelController, ViewPort } from './controller';
import { webviewHtml, webviewOptions } from './webview-html';

export const TRANSCRIPT_VIEW = 'arbor.transcript';

export class Webviews {
  /** The open transcript tabs, by session. */
  private readonly panels = new Map<string, vscode.WebviewPanel>();

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: Pick<PanelController, 'connect' | 'receive' | 'knownName' | 'nameOf'>,
    private readonly notifier: Pick<ApprovalNotifier, 'attach'>,
  ) {}

  attachPanel(view: vscode.WebviewView): void {
    view.webview.options = webviewOptions(this.extensionUri);
    view.webview.html = webviewHtml(view.webview, this.extensionUri, 'panel');
    this.notifier.attach(view);
    this.connect(view.webview, 'panel', undefined, view.onDidDispose);
  }

  openTranscript(sessionId: string): void {
    const open = this.panels.get(sessionId);
    if (open) {
      open.reveal();
      return;
    }
    const panel = vscode.window.createWebviewPanel(
      TRANSCRIPT_VIEW,
      this.controller.knownName(sessionId) ?? 'Arbor transcript',
      vscode.ViewColumn.Active,
      webviewOptions(this.extensionUri),
    );
    this.adoptTranscript(panel, sessionId);
  }

  /** A transcript tab restored after a window reload (WebviewPanelSerializer). */
  adoptTranscript(panel: vscode.WebviewPanel, sessionId: string): void {
    panel.webview.options = webviewOptions(this.extensionUri);
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'arbor.svg');
    // The tab is named like the tree row; after a reload the name is read from the log.
    panel.title = this.controller.knownName(sessionId) ?? 'Arbor transcript';
    let open = true;
    void this.controller.nameOf(sessionId).then(
      (name) => {
        if (open) panel.title = name;
      },
      () => undefined,
    );
    panel.webview.html = webviewHtml(panel.webview, this.extensionUri, 'transcript', sessionId);
    this.panels.set(sessionId, panel);
    this.connect(panel.webview, 'transcript', sessionId, panel.onDidDispose);
    panel.onDidDispose(() => {
      open = false;
      this.panels.delete(sessionId);
    });
  }

  private connect(webview: vscode.Webview, view: 'panel' | 'transcript', sessionId: string | undefined, onDispose: vscode.Event<void>): void {
    const port: ViewPort = { view, ...(sessionId ? { sessionId } : {}), post: (msg) => void webview.postMessage(msg) };
    const off = this.controller.connect(port);
    const sub = webview.onDidReceiveMessage((msg: unknown) => void this.controller.receive(port, msg));
    onDispose(() => {
      off();
      sub.dispose();
    });
  }
}
