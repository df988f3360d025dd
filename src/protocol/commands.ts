// Part of the wire contract (src/protocol.ts re-exports it): the command ids, the context-menu
// payloads and the pure predicates both sides share.

import type { GoalPhase, TreeNode } from './tree';

// ── commands and context menus ────────────────────────────────────────────────

/** Every command Arbor contributes: package.json lists the same ids (a test holds the two equal). */
export const COMMAND_IDS = [
  'arbor.newConversation',
  'arbor.fork',
  'arbor.rewind',
  'arbor.tryWays',
  'arbor.sendMessage',
  'arbor.interrupt',
  'arbor.cancelWorkflow',
  'arbor.openTranscript',
  'arbor.openEventLog',
  'arbor.setApiKey',
  'arbor.setSandbox',
  'arbor.exportSession',
  'arbor.deleteSession',
  'arbor.compact',
  'arbor.copyId',
  'arbor.focusInput',
  'arbor.setGoal',
  'arbor.pauseGoal',
  'arbor.resumeGoal',
  'arbor.clearGoal',
  'arbor.setBudget',
  'arbor.startAgent',
  'arbor.runOnPlacement',
] as const;
export type CommandId = (typeof COMMAND_IDS)[number];

/**
 * The `data-vscode-context` of a tree node: VS Code reads it on right-click, the `when`
 * clauses of package.json's `webview/context` menus test its keys, and the command chosen
 * receives it as its argument.
 */
export interface TreeNodeMenuContext {
  webviewSection: 'treeNode';
  arborSessionId: string;
  /** A turn is in progress: it can be interrupted. */
  arborRunning: boolean;
  /** It can take another message (everything but a one-shot child). */
  arborContinuable: boolean;
  arborCompactable: boolean;
  arborGoalOwner: boolean;
  /** Its goal's phase, when it has one (picks Pause / Resume / Clear). */
  arborGoalPhase?: GoalPhase;
  preventDefaultContextMenuItems: true;
}

/** A workflow run's node: it is no session, its menu offers Cancel Workflow. */
export interface WorkflowNodeMenuContext {
  webviewSection: 'workflowNode';
  arborRunId: string;
  arborRunning: boolean;
  preventDefaultContextMenuItems: true;
}

/** A chat message: `arborView` lets "Fork Conversation" open the fork where the fork button would. */
export interface ChatMessageMenuContext {
  webviewSection: 'chatMessage';
  arborSessionId: string;
  arborSeq: number;
  arborView: 'panel' | 'transcript';
  preventDefaultContextMenuItems: true;
}

export type MenuContext = TreeNodeMenuContext | WorkflowNodeMenuContext | ChatMessageMenuContext;

/** What a command receives: the context of the menu it was chosen in, nothing from the palette. */
export type CommandArgs = Partial<
  Pick<TreeNodeMenuContext, 'arborSessionId'> & Pick<ChatMessageMenuContext, 'arborSeq' | 'arborView'> & Pick<WorkflowNodeMenuContext, 'arborRunId'>
>;

/** A conversation you own (a root or a fork, not a subagent): only these hold goals. */
export function ownsGoals(node: Pick<TreeNode, 'origin' | 'mode'>): boolean {
  return node.origin !== 'subagent' && node.mode === undefined;
}

/** What Compact is offered for: a conversation you own that has had a turn. */
export function isCompactable(node: Pick<TreeNode, 'origin' | 'mode' | 'lastStopReason'>): boolean {
  return ownsGoals(node) && node.lastStopReason !== undefined;
}
