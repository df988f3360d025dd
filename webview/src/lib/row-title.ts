// What a tree row says about itself beyond its name: the hover text and the remote badge.
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
