// What a tree row says about itself beyond its name: the hover texts, labels and the remote badge.
import type { TreeNode, WorkflowNodeView } from '../../../src/protocol';
import { costLines, statusWord } from './format';
import { outcomeCounts } from './run-words';

/**
 * A remote child's badge: its program and the version number out of the program's
 * `--version` line ("codex-cli 0.171.0" → "codex 0.171.0", "2.1.332 (Claude Code)" →
 * "claude-code 2.1.332"); the whole line is in the title.
 */
export function remoteBadge(remote: NonNullable<TreeNode['remote']>): { text: string; program: string; number?: string; title: string } {
  const number = remote.version?.match(/\d+(?:\.\d+)+(?:-[\w.]+)?/)?.[0] ?? remote.version?.slice(0, 16);
  return {
    text: number ? `${remote.program} ${number}` : remote.program,
    program: remote.program,
    ...(number ? { number } : {}),
    title: `Run by ${remote.program}${remote.version ? ` (${remote.version})` : ''}, another agent program`,
  };
}

/** A workflow run's hover text: its script, progress, phases and latest log lines; a click opens its tab. */
export function runTitle(run: WorkflowNodeView): string {
  return [
    `workflow ${run.name}: ${run.description}`,
    `${run.status}${run.code ? ` (${run.code})` : ''} · ${run.agents} agent${run.agents === 1 ? '' : 's'}, ${run.running} running${run.ended && outcomeCounts(run.ended) ? ` · ${outcomeCounts(run.ended)}` : ''}`,
    ...(run.phases.length ? [`phases: ${run.phases.join(' → ')}`] : []),
    ...run.logs.slice(-5).map((l) => `log: ${l.length > 120 ? `${l.slice(0, 120)}…` : l}`),
    run.runId,
  ].join('\n');
}

/** A session's hover text: name, lineage, provider (and remote program), status, cost, refusals, id. */
export function nodeTitle(node: TreeNode, name: string, parentName: string | undefined): string {
  const via = node.remote ? ` · ${node.remote.program}${node.remote.version ? ` (${node.remote.version})` : ''}` : node.provider ? ` · ${node.provider}` : '';
  return [
    name,
    `${node.origin}${parentName ? ` of ${parentName}` : ''} · depth ${node.depth}${via}${node.mode ? ` · ${node.mode}` : ''}`,
    `${statusWord(node.status)}${node.lastStopReason ? ` (last stop: ${node.lastStopReason})` : ''}${node.activity ? ` · ${node.activity}` : ''}`,
    ...costLines(node),
    ...(node.refused ? [`${node.refused} action${node.refused === 1 ? ' was' : 's were'} refused (approval)`] : []),
    node.id,
  ].join('\n');
}

/** The cost badge's hover: whose spend the figure is, and what a figure without a price means. */
export function costTitle(node: TreeNode, cost: { text: string; subtree: boolean }): string {
  if (cost.subtree) return 'Cost of this node and everything below it';
  if (node.remote && cost.text.startsWith('billed'))
    return `${node.tokens.prompt + node.tokens.completion} tokens; the cost is ${cost.text}, on its own account`;
  return node.costUsd !== undefined ? 'Cost of this node' : 'Prompt + completion tokens (no price for its model)';
}

/** The approval badge's hover: this node waits for the user, or a subagent below it does. */
export function approvalsTitle(node: TreeNode): string {
  return node.activity === 'waiting for approval' ? 'Waiting for your approval' : 'A subagent below needs your approval';
}

/** "1 approval waiting", "3 approvals waiting". */
export function approvalsLabel(n: number): string {
  return `${n} approval${n === 1 ? '' : 's'} waiting`;
}

export function worktreeTitle(w: NonNullable<TreeNode['worktree']>): string {
  return `Works in its own git worktree, branch ${w.branch} (${w.state})`;
}

export function reportsTitle(n: number): string {
  return `${n} report${n === 1 ? '' : 's'}`;
}

/** A row's outcome with its refusals: "completed · 2 refused", "stopped: error · 1 refused". */
export function refusedText(node: TreeNode): string {
  const how = node.lastStopReason === 'completed' || !node.lastStopReason ? 'completed' : `stopped: ${node.lastStopReason}`;
  return `${how} · ${node.refused} refused`;
}

/** A row's accessible name: its name, status, refusals and running time ("surveyor, running, 1m 05s"). */
export function rowLabel(name: string, node: TreeNode | undefined, since: string | undefined): string {
  return `${name}, ${node ? statusWord(node.status) : 'unknown'}${node?.refused ? `, ${node.refused} refused` : ''}${since ? `, ${since}` : ''}`;
}
