import * as vscode from 'vscode';
import type { BestOfStart, WaySpec } from '../core/harness/bestof/types';
import type { WaysQuestion } from './view-port';

// "Try N ways…" (decision 0061): the host's questions, in quick picks — how many ways (2–4), the
// prompt when the message is a reply, then either the conversation's model for every way or a
// model or agent file per way. Escape at any question cancels and nothing is made.

const SAME = 'same';

/** Undefined: the human cancelled. */
export async function pickWays(q: WaysQuestion): Promise<BestOfStart | undefined> {
  const n = await vscode.window.showQuickPick(
    [2, 3, 4].map((k) => ({ label: `${k} ways`, description: k === 2 ? 'each in its own git worktree' : undefined, k })),
    { title: 'Try how many ways? Each runs in its own git worktree; you compare them and apply one.' },
  );
  if (!n) return undefined;
  let prompt: string | undefined;
  if (q.needsPrompt) {
    prompt = await vscode.window.showInputBox({
      title: `Try ${n.k} ways from this reply`,
      prompt: 'What should each way do? (From one of your own messages, each way re-runs that message.)',
      validateInput: (v) => (v.trim() ? undefined : 'Type what each way should do.'),
    });
    if (!prompt) return undefined;
  }
  const how = await vscode.window.showQuickPick(
    [
      { label: `The same for every way (${q.model})`, value: SAME },
      { label: 'A model or agent per way…', value: 'each' },
    ],
    { title: 'Which model or agent does each way use?' },
  );
  if (!how) return undefined;
  const ways: WaySpec[] = [];
  for (let i = 1; i <= n.k; i++) {
    if (how.value === SAME) {
      ways.push({});
      continue;
    }
    const spec = await pickOne(q, i, n.k);
    if (!spec) return undefined;
    ways.push(spec);
  }
  return { ...(prompt ? { prompt } : {}), ways };
}

async function pickOne(q: WaysQuestion, i: number, n: number): Promise<WaySpec | undefined> {
  const pick = await vscode.window.showQuickPick(
    [
      { label: `The conversation's model (${q.model})`, spec: {} as WaySpec | undefined },
      ...q.agents.map((a) => ({ label: `Agent: ${a}`, description: 'defined in a file', spec: { agent: a } as WaySpec | undefined })),
      { label: 'Another model…', spec: undefined },
    ],
    { title: `Way ${i} of ${n}: which model or agent?` },
  );
  if (!pick) return undefined;
  if (pick.spec) return pick.spec;
  const model = await vscode.window.showInputBox({
    title: `Way ${i} of ${n}: the model's name`,
    prompt: 'As your endpoint names it (the same key and endpoint are used).',
    validateInput: (v) => (v.trim() ? undefined : 'Type a model name.'),
  });
  return model ? { model: model.trim() } : undefined;
}
