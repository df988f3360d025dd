import { formatUsd } from '../../core/cost/spend';
import type { NodeStatus, SpendView } from '../../protocol';

export type StatusCounts = Partial<Record<NodeStatus, number>>;

/**
 * The status bar item, from the tree's one status fold: how many agents run, and how many
 * wait for you (an approval). Never claims work is running that the tree shows stopped.
 */
export function statusBarView(counts: StatusCounts, spend?: SpendView): { text: string; tooltip: string } {
  const view = statusWords(counts);
  if (!spend || spend.tokens === 0) return view;
  // The same figures as the tree (the one fold, priced once): dollars when every model has a price.
  const cost = spend.costUsd !== undefined ? formatUsd(spend.costUsd) : undefined;
  const tokens = `${spend.tokens.toLocaleString('en-US')} tokens`;
  const saved = spend.savedUsd ? `, saved ${formatUsd(spend.savedUsd)} by cache hits` : '';
  return {
    text: `${view.text} · ${cost ?? compactTokens(spend.tokens)}`,
    tooltip: `${view.tooltip}\nSpent in this workspace's conversations: ${cost ? `${cost} (${tokens}${saved})` : `${tokens} (a model with no price: tokens only)`}.`,
  };
}

const compactTokens = (n: number): string => (n < 1000 ? `${n} tok` : n < 1_000_000 ? `${(n / 1000).toFixed(1)}k tok` : `${(n / 1_000_000).toFixed(1)}M tok`);

function statusWords(counts: StatusCounts): { text: string; tooltip: string } {
  const running = (counts.running ?? 0) + (counts.approval ?? 0) + (counts.waiting ?? 0);
  const asking = counts.approval ?? 0;
  const queued = counts.queued ?? 0;
  if (running + queued === 0) return { text: '$(type-hierarchy) Arbor', tooltip: 'Arbor: no agent running. Click to open the panel.' };
  const parts = [
    ...(running ? [`${running} running`] : []),
    ...(queued ? [`${queued} queued`] : []),
    ...(asking ? [`${asking} need${asking === 1 ? 's' : ''} you`] : []),
  ];
  const icon = asking ? '$(shield)' : '$(sync~spin)';
  const detail = [
    `${counts.running ?? 0} running a turn`,
    ...(counts.waiting ? [`${counts.waiting} waiting for children`] : []),
    ...(queued ? [`${queued} queued for a free slot`] : []),
    ...(asking ? [`${asking} waiting for your approval`] : []),
  ].join(', ');
  return { text: `${icon} Arbor: ${parts.join(' · ')}`, tooltip: `Arbor: ${detail}. Click to open the panel.` };
}
