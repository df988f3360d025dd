import { fail, ok } from '../tools/result';
import type { Tool } from '../tools/tool';
import type { WorkflowEngine } from './engine';
import type { WorkflowInput } from './input';

// Static on purpose (decision 0027, seed 003): a global tool whose text never changes keeps
// every fork's and child's request head equal to its parent's.
const DESCRIPTION = [
  'Run a JavaScript workflow that fans out one-shot subagents, for work that splits into many similar independent tasks (review 40 files, try 8 fixes).',
  'The script is plain JS with top-level await and ends with `return <json>`. Its only globals:',
  '- agent(prompt, {label?, schema?, tools?, persona?, provider?, isolation?}): a new child with an empty history (isolation: "worktree" gives it its own git worktree); resolves to its final text (or the object it submitted when `schema` is given), or null if it failed or was interrupted. Throws for fatal errors (AGENT_CAP, CANCELLED, WALL_CLOCK, BUDGET, BAD_AGENT_REQUEST).',
  '- parallel([() => agent(...), ...]) runs thunks at once (bounded by `concurrency`); pipeline(items, stage1, stage2, ...) sends each item through the stages in order.',
  '- phase(title) and log(message) show progress in the agent tree; args is the `args` you pass.',
  'No files, network, timers or require: agents do the work. The script runs in its own OS-sandboxed process (no network, no files, no other process visible); where no sandbox can start the tool refuses (NO_SANDBOX) unless the user allowed unconfined scripts.',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: an example script for the model, shown as text
  'Example: const r = await parallel(args.files.map((f) => () => agent(`Review ${f}`, {label: f}))); return r;',
].join('\n');

const PARAMS = {
  type: 'object' as const,
  properties: {
    script: { type: 'string' as const, description: 'The workflow body: JavaScript, top-level await allowed, ending with `return <json>`.' },
    meta: {
      type: 'object' as const,
      description: 'What the run is, shown in the tree.',
      properties: {
        name: { type: 'string' as const, description: 'Short name, e.g. "review-files".' },
        description: { type: 'string' as const, description: 'One sentence.' },
      },
      required: ['name', 'description'],
    },
    args: { description: 'Optional JSON value the script reads as `args`.' },
    maxTotalAgents: { type: 'integer' as const, minimum: 1, description: 'Most agent() calls this run may make (the deployment caps it).' },
    concurrency: { type: 'integer' as const, minimum: 1, description: 'Most agents running at once (default 4).' },
    budget: {
      type: 'object' as const,
      description:
        "Optional budget for the run's agents together: {maxTokens?, maxCostUsd?}; at most what your own budget has left. Past it, agent() throws BUDGET and the run ends.",
      properties: { maxTokens: { type: 'integer' as const, minimum: 1 }, maxCostUsd: { type: 'number' as const, minimum: 0 } },
      additionalProperties: false,
    },
  },
  required: ['script', 'meta'],
  additionalProperties: false,
};

/** `workflow`: the global tool over the engine. */
export function createWorkflowTool(engine: WorkflowEngine): Tool {
  return {
    name: 'workflow',
    description: DESCRIPTION,
    parameters: PARAMS,
    async execute(args, ctx) {
      const o = await engine.run(args as unknown as WorkflowInput, ctx);
      const head = { ...(o.runId ? { runId: o.runId } : {}), status: o.status, agents: o.agents };
      if (o.status === 'completed') return ok(JSON.stringify({ ...head, result: JSON.parse(o.resultJson ?? 'null') }, null, 2));
      // A script that returned too early (AGENTS_UNFINISHED) still gave a result: the model gets it with the failure.
      const tail = o.resultJson !== undefined ? { ...head, result: JSON.parse(o.resultJson) } : head;
      return fail('WORKFLOW', `workflow: ${o.code ?? 'FAILED'}: ${o.error ?? o.status}${o.line ? ` (script line ${o.line})` : ''}\n${JSON.stringify(tail)}`);
    },
  };
}
