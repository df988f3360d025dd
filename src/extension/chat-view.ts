import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import {
  isWebviewToHost,
  type HostToWebview,
  type WebviewToHost,
} from '../protocol';

type Handlers = {
  [K in WebviewToHost['type']]: (msg: Extract<WebviewToHost, { type: K }>) => void;
};

/** The side-panel chat: serves the built Svelte webview and speaks src/protocol.ts. */
export class ChatViewProvider implements vscode.WebviewViewProvider {
  static readonly viewType = 'arbor.chat';

  private readonly webviewRoot: vscode.Uri;

  constructor(extensionUri: vscode.Uri) {
    this.webviewRoot = vscode.Uri.joinPath(extensionUri, 'dist', 'webview');
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    const webview = view.webview;
    webview.options = {
      enableScripts: true,
      // Only the built bundle is loadable: not the workspace, not the extension source.
      localResourceRoots: [this.webviewRoot],
    };
    webview.html = this.html(webview);

    const post = (msg: HostToWebview): void => {
      void webview.postMessage(msg);
    };
    // One handler per message type; the mapped type makes a missing one a compile error.
    const handlers: Handlers = {
      'webview/ready': () => post({ type: 'state/snapshot', sessions: [] }),
    };

    const subscription = webview.onDidReceiveMessage((msg: unknown) => {
      if (!isWebviewToHost(msg)) {
        post({ type: 'message/rejected', code: 'BAD_MESSAGE', detail: describe(msg) });
        return;
      }
      handlers[msg.type](msg);
    });
    view.onDidDispose(() => subscription.dispose());
  }

  private html(webview: vscode.Webview): string {
    // A fresh nonce per render: only the script tag we write here may run.
    const nonce = randomBytes(16).toString('base64');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.webviewRoot, 'index.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.webviewRoot, 'index.css'));
    const csp = [
      `default-src 'none'`,
      `style-src ${webview.cspSource}`,
      `font-src ${webview.cspSource}`,
      `img-src ${webview.cspSource} data:`,
      `script-src 'nonce-${nonce}'`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <meta http-equiv="Content-Security-Policy" content="${csp}">
  <meta name="viewport" content="width=device-width, initial-scale=1.0">
  <link rel="stylesheet" href="${style.toString()}">
  <title>Arbor</title>
</head>
<body>
  <div id="app"></div>
  <script type="module" nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
  }
}

/** A short, safe description of a rejected message for the webview's error display. */
function describe(msg: unknown): string {
  if (typeof msg === 'object' && msg !== null && typeof (msg as { type?: unknown }).type === 'string') {
    return `unknown or malformed message of type ${JSON.stringify((msg as { type: string }).type).slice(0, 100)}`;
  }
  return 'message is not an object with a string "type"';
}
