// A budget stop in people's words (issue 21.6). The host's message is written for the model and
// the CLI as well ("The budget of X (75000 tokens) cannot take the next request: 6000 tokens are
// left … this request may take 9000 …; 'arbor run --budget' …"); the panel says what happened in
// round figures and how to go on inside VS Code, and keeps the host's text when it cannot read it.
import { usd } from './format';

const NUM = '(\\d+(?:\\.\\d+)?)';

/** 950 → "950", 9000 → "9k", 9500 → "9.5k", 69_000 → "69k", 2_400_000 → "2.4M". */
function compact(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 10_000) return `${Number((n / 1000).toFixed(1))}k`;
  if (n < 1_000_000) return `${Math.round(n / 1000)}k`;
  return `${Number((n / 1_000_000).toFixed(1))}M`;
}

/** "Budget reached: 69k of 75k tokens used; the next step needs about 9k. Raise the budget to go on." */
export function budgetStopWords(error: string): string {
  const limit = /^The budget of .*? \(([^)]*)\) (?:cannot take the next request|is used up)/.exec(error)?.[1] ?? '';
  const maxTokens = new RegExp(`${NUM} tokens`).exec(limit)?.[1];
  const maxUsd = new RegExp(`\\$${NUM}`).exec(limit)?.[1];
  const tokensLeft = new RegExp(`: ${NUM} tokens are left.*?this request may take ${NUM}`).exec(error);
  if (maxTokens && tokensLeft) {
    const max = Number(maxTokens);
    return `Budget reached: ${compact(max - Number(tokensLeft[1]))} of ${compact(max)} tokens used; the next step needs about ${compact(Number(tokensLeft[2]))}. Raise the budget to go on.`;
  }
  const usdLeft = new RegExp(`: \\$${NUM} is left.*?this request may cost \\$${NUM}`).exec(error);
  if (maxUsd && usdLeft) {
    const max = Number(maxUsd);
    return `Budget reached: ${usd(Math.max(0, max - Number(usdLeft[1])))} of ${usd(max)} used; the next step costs about $${usdLeft[2]}. Raise the budget to go on.`;
  }
  const spentTokens = new RegExp(`is used up: ${NUM} tokens are spent`).exec(error);
  if (maxTokens && spentTokens)
    return `Budget reached: ${compact(Number(spentTokens[1]))} of ${compact(Number(maxTokens))} tokens used. Raise the budget to go on.`;
  const spentUsd = new RegExp(`is used up: \\$${NUM} is spent`).exec(error);
  if (maxUsd && spentUsd) return `Budget reached: $${spentUsd[1]} of ${usd(Number(maxUsd))} used. Raise the budget to go on.`;
  const plain = withoutCliHints(error);
  return /raise the budget/i.test(plain) ? plain : `${plain} Raise the budget to go on.`;
}

/** The host's words without the command-line ways to act, which do not apply in VS Code. */
export function withoutCliHints(text: string): string {
  return text
    .replace(/ \(Set Budget on its node, or '[^']*'\)/g, ' (Set Budget on its node)')
    .replace(/ \(([\w.]+), or --[\w-]+\)/g, ' ($1)')
    .replace(/ unless ([\w.]+) \(or --[\w-]+\) sets one/g, ' unless $1 sets one')
    .replace(/ A human can raise the budget \(Set Budget on its node\); then a message goes on from here\./g, ' Raise the budget to go on.');
}
