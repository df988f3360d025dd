// `data-vscode-context` payloads: VS Code reads them on right-click to fill the
// `webview/context` menus (`when: webviewSection == 'treeNode'`, `arborRunning`, …).
import type { TreeNode } from '../../../src/protocol';
import { isActive } from './format';

export function treeNodeContext(node: TreeNode): string {
  // A workflow run's node is no session: its menu offers Cancel Workflow, not the session actions.
  if (node.kind === 'workflow' && node.workflow)
    return JSON.stringify({ webviewSection: 'workflowNode', arborRunId: node.workflow.runId, arborRunning: isActive(node.status), preventDefaultContextMenuItems: true });
  return JSON.stringify({
    webviewSection: 'treeNode',
    arborSessionId: node.id,
    // Running or waiting: a turn is in progress and can be interrupted.
    arborRunning: isActive(node.status),
    // Everything but a one-shot child can take another message (roots, forks, continuable children).
    arborContinuable: node.mode !== 'one-shot',
    // Compact only what can be compacted: a conversation you own (not a subagent) that has had a turn.
    arborCompactable: node.origin !== 'subagent' && node.mode === undefined && node.lastStopReason !== undefined,
    // Goals: only conversations you own hold one; the phase picks Pause / Resume / Clear.
    arborGoalOwner: node.origin !== 'subagent' && node.mode === undefined,
    ...(node.goal ? { arborGoalPhase: node.goal.phase } : {}),
    preventDefaultContextMenuItems: true,
  });
}

/** `arborView` lets "Fork Conversation" open the fork where the fork button would (a tab from a tab). */
export function chatMessageContext(sessionId: string, seq: number, view: 'panel' | 'transcript' = 'panel'): string {
  return JSON.stringify({ webviewSection: 'chatMessage', arborSessionId: sessionId, arborSeq: seq, arborView: view, preventDefaultContextMenuItems: true });
}
