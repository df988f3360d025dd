// `data-vscode-context` payloads: VS Code reads them on right-click to fill the
// `webview/context` menus (`when: webviewSection == 'treeNode'`, `arborRunning`, …). Their
// shapes, and the predicates the host's commands share, are defined in src/protocol.ts.
import { type ChatMessageMenuContext, isCompactable, type MenuContext, ownsGoals, type TreeNode } from '../../../src/protocol';
import { isActive } from './format';

export function treeNodeContext(node: TreeNode): string {
  // A workflow run's node is no session: its menu offers Cancel Workflow, not the session actions.
  if (node.kind === 'workflow' && node.workflow)
    return menu({ webviewSection: 'workflowNode', arborRunId: node.workflow.runId, arborRunning: isActive(node.status), preventDefaultContextMenuItems: true });
  return menu({
    webviewSection: 'treeNode',
    arborSessionId: node.id,
    // Running or waiting: a turn is in progress and can be interrupted.
    arborRunning: isActive(node.status),
    // Everything but a one-shot child can take another message (roots, forks, continuable children).
    arborContinuable: node.mode !== 'one-shot',
    // Compact only what can be compacted: a conversation you own (not a subagent) that has had a turn.
    arborCompactable: isCompactable(node),
    // Goals: only conversations you own hold one; the phase picks Pause / Resume / Clear.
    arborGoalOwner: ownsGoals(node),
    ...(node.goal ? { arborGoalPhase: node.goal.phase } : {}),
    preventDefaultContextMenuItems: true,
  });
}

/** `arborView` lets "Fork Conversation" open the fork where the fork button would (a tab from a tab). */
export function chatMessageContext(sessionId: string, seq: number, view: ChatMessageMenuContext['arborView'] = 'panel'): string {
  return menu({ webviewSection: 'chatMessage', arborSessionId: sessionId, arborSeq: seq, arborView: view, preventDefaultContextMenuItems: true });
}

const menu = (context: MenuContext): string => JSON.stringify(context);
