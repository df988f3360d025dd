// `data-vscode-context` payloads: VS Code reads them on right-click to fill the
// `webview/context` menus (`when: webviewSection == 'treeNode'`, `arborRunning`, …).
import type { TreeNode } from '../../../src/protocol';
import { isActive } from './format';

export function treeNodeContext(node: TreeNode): string {
  return JSON.stringify({
    webviewSection: 'treeNode',
    arborSessionId: node.id,
    // Running or waiting: a turn is in progress and can be interrupted.
    arborRunning: isActive(node.status),
    // Everything but a one-shot child can take another message (roots, forks, continuable children).
    arborContinuable: node.mode !== 'one-shot',
    preventDefaultContextMenuItems: true,
  });
}

export function chatMessageContext(sessionId: string, seq: number): string {
  return JSON.stringify({ webviewSection: 'chatMessage', arborSessionId: sessionId, arborSeq: seq, preventDefaultContextMenuItems: true });
}
