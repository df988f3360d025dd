import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';

/** The built webview's root; the only folder a webview may load from. */
export const webviewRoot = (extensionUri: vscode.Uri): vscode.Uri => vscode.Uri.joinPath(extensionUri, 'dist', 'webview');

export function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
  return { enableScripts: true, localResourceRoots: [webviewRoot(extensionUri)] };
}

const attr = (s: string): string => s.replace(/[&"<>]/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The one page both the side panel and transcript tabs load: a strict CSP with a fresh
 * crypto-random nonce, the built bundle only, no inline handlers. The mode and session
 * ride on data attributes because no inline script may run.
 */
export function webviewHtml(webview: vscode.Webview, extensionUri: vscode.Uri, view: 'panel' | 'transcript', sessionId?: string): string {
  const nonce = randomBytes(18).toString('base64');
  const root = webviewRoot(extensionUri);
  const script = webview.asWebviewUri(vscode.Uri.joinPath(root, 'index.js'));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(root, 'index.css'));
  const csp = [
    `default-src 'none'`,
    `style-src ${webview.cspSource}`,
    `font-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} data:`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  const data = `data-view="${view}"${sessionId ? ` data-session="${attr(sessionId)}"` : ''}`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <meta http-equiv="Content-Security-Policy" content="${csp}">
  <meta name="viewport" content="width=device-width, initial-scale=1.0">
  <link rel="stylesheet" href="${style.toString()}">
  <title>Arbor</title>
</head>
<body ${data}>
  <div id="app" ${data}></div>
  <script type="module" nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
}
